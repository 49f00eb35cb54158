package storage

// ReplicaState is a replicated partition's own small file (replica.state,
// beside the segments): the last leader epoch this replica wrote records
// in — a follower records it before appending the first record fetched in
// a new epoch, a leader before writing its first — and a checkpoint of the
// committed point it last learned (never above what was committed, so it
// is a safe visible high watermark to reopen with).
type ReplicaState struct {
	LastEpoch uint64
	Committed uint64
}
