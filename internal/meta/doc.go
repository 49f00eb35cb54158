// Package meta is Narad's metastore: the cluster's shared metadata, replicated
// with Raft (hashicorp/raft) and applied into a bbolt database on every node.
//
// It owns the domains topics (configuration, schema, fan-out links),
// assignments (partition → owner, move target), members (with draining),
// and users (credentials, grants, IDs), and reserves schemas (an empty
// bucket and a version counter) for a schema registry that will fill it;
// a topic's schema lives in its topic record today. Every write is one
// Command (an op code plus a JSON payload) committed through Raft and
// applied identically on every node; reads are served locally from the
// node's own replica.
//
// Invariants kept here:
//
//   - Apply is deterministic. A command is validated inside Apply against the
//     state it is applied to, so of two racing proposals at most one wins and
//     every node agrees on which. Apply never reads the clock or iterates a map
//     to decide anything; timestamps travel inside the command.
//   - A command that fails validation changes nothing, not even the applied
//     index: re-applying it on the same state fails the same way, so a replay
//     after a crash is harmless.
//   - Each domain has a version counter equal to the Raft index of the last
//     command that changed it. Raft indexes only grow, so the maximum over
//     several domains (LatestDomainVersion) moves whenever any of them moves.
//     Counters are stored in the FSM database, so they survive restarts,
//     snapshots and restores.
//   - A topic's Incarnation is the Raft index of its create, set by the FSM
//     and never changed: a re-created topic of the same name always has a
//     larger one. ConfirmIncarnationGone is the leader's word that an
//     incarnation is no longer current.
//   - Fan-out links are symmetric: a child's Parent names a topic whose
//     Children lists the child, and vice versa. There are no chains (a parent
//     is never a child, a child never has children) and a parent has at most
//     MaxChildren children. A child leaving its parent (detach, or the
//     parent's delete) keeps the schema it inherited: the parent's, when
//     it had one. The command says so (keep_schema), so a command written
//     before the rule replays to the state it made then. A link's filter
//     (FanoutFilter) lives on the child while the link does: set by the
//     attach, changed by set-link-filter, cleared with the link; a record
//     or command without one is a link without a filter, as before
//     filters existed. A link's envelope (FanoutEnvelope) lives beside
//     it the same way: set by the attach, changed by set-link-filter
//     (set_envelope), cleared with the link; absent, the link copies as
//     published.
//   - A user's ID is the Raft index of the command that created it, set by
//     the FSM and never changed; a topic's OwnerID is its creator's ID, bound
//     when the create applies. Ownership is the pair (name, ID), so deleting a
//     user and creating another of the same name hands over nothing. Records
//     written before IDs existed read as ID 0 and keep matching by name only
//     while the user of that name is still that legacy record (Topic.OwnedBy).
//   - Read-your-writes across nodes: CatchUp returns only once this replica
//     has applied every write the leader had acknowledged when asked (a read
//     index: the leader confirms with a quorum that it still leads, without
//     writing to the log, and names its applied version). A node about to
//     answer "no such topic" asks first (CatchUpUnlessKnown, bounded by
//     CatchUpBound). A follower asks the leader through the Confirmer given
//     at Open, which receives the leader's member record.
//   - A member's recorded disk (Member.DiskID) changes only by ReplaceDisk,
//     which in the same step takes the node out of every in-sync set: a
//     copy on a replaced disk is never counted or elected. SetInSync adds
//     a member only with evidence that it holds everything committed: the
//     leader decided on the in-sync set that is current (a stale view is
//     refused), names the member's recorded disk as it saw it fetching, and
//     the member's acknowledged end there reaches the leader's committed
//     point and the epoch's start (SetInSyncCmd.Apply; a member recorded
//     before disk ids, with none, is taken on the leader's word: the
//     upgrade gap, disks.go).
//   - A node that opened with no Raft state of its own (a wiped disk, a new
//     member) grants no vote or pre-vote to a candidate with a history
//     until its replica records the disk it runs on (Options.DiskID): that
//     record is an entry appended after the loss, so every entry committed
//     before it is in this node's log by then (abstain.go). Raft assumes a
//     voter never forgets its log; this is how a forgotten one is kept from
//     electing a leader that lacks a committed entry.
//   - A copy being moved off a replicated partition (Assignment.Leaving)
//     is marked by the SetReplicas that adds its replacement, and every
//     later change that keeps the copy must name it; the mark goes only
//     with the copy, or with the move called off (replicas unchanged).
//     So a partition holding one copy more than its factor says itself
//     whether the extra copy is a replacement catching up (kept) or a
//     surplus after a lowered factor (dropped), to any controller
//     (leaving.go). Placements written whole never carry a mark.
//   - Hot-path reads (Topic, Owner) cost one atomic load when nothing changed:
//     decoded records sit in an immutable cache that is replaced, never
//     mutated, when the topics or assignments version moves.
//
// On-disk layout under Options.Dir:
//
//	raft.db     Raft log and stable store (raft-boltdb)
//	snapshots/  Raft file snapshots, the newest two retained
//	fsm.db      the applied state (bbolt)
//
// fsm.db is kept across restarts and records the index of the last command it
// applied, in the same transaction as the change; Raft's replay of entries at
// or below that index is skipped. So a restarted node serves its last applied
// state at once, before any leader is elected. fsm.db is derived data: if it
// is missing, or older than the newest snapshot, Open restores it from that
// snapshot and Raft replays the log after it. Deleting fsm.db while the node
// is stopped is always safe.
package meta
