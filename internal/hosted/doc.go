// Package hosted owns the partitions this node hosts: one Partition
// value per topic/partition in one map (Set), holding everything the node
// keeps for it — the open log (or why it cannot open), the queue (lease
// table, durable frontier, durable delivery counts) and the dedupe window
// of producer ids — and, for the replicated ones, the replication role
// this node plays for each (Roles: a leader or a follower, roles.go; the
// side state a follower keeps of its leader, sidestate.go; a copy left
// single reopened unheld, release.go). The roles keep their own map and
// lock, so a commit's role lookup never waits behind a log being opened.
//
// What is done to one hosted partition lives here too: a lease round and
// a replay by position (read.go; on a topic with message groups the round
// reads first and leases in group order, groups.go), scheduled records
// filed and delivered when due (scheduled.go, over package schedule and
// lease.Due), the upkeep the broker's loops run
// (upkeep.go: queue state made durable, lapsed leases purged, retention,
// idle logs closed), the hand-off of held records to the dead-letter
// topic (deadletter.go: commit before settle), the backlog gauges
// (backlog.go) and what a partition move asks (moves.go). The broker
// keeps the request level: which partitions a consume visits, long polls,
// topic administration.
//
// Lifecycle of a Partition (one entry of the Set's map):
//
//   - open: Get opens the log lazily, held (replica.Log) when the
//     partition is replicated here; a failed open is remembered with its
//     reason and retried at most once per retry interval (health.go);
//   - serve: Queue loads the queue the first time it is touched (frontier
//     file, clamped to the high watermark; counts file); Dedupe admits a
//     commit's records against the window (window.go);
//   - evict: CloseIf closes a log untouched since a given access; the
//     queue and window stay, so an idle log costs no file handles;
//   - freeze and hand over (a move, a change of replica role): Forget drops
//     the partition's log, queue and window, after the caller persisted
//     what must survive (Queue.Persist, Queue.PersistCounts);
//   - close: CloseTopic, RemoveTopicData and CloseAll.
//
// An entry leaves the map when it holds nothing (no log, no failure, no
// queue, no window), so the map is bounded by the partitions in use.
//
// Lock order: Set.mu guards the map and each entry's pointers; it is
// taken before, and never while holding, a queue's frontier lock
// (Queue.pmu), its counts lock or a window's lock. The only I/O under
// Set.mu is opening a log (Get), as before the map was one.
//
// Invariants:
//   - Get stamps a log's last access; Peek, Describe and Unavailable never
//     do, so monitoring and describing cannot keep an idle log open or
//     open a closed one;
//   - the hwm file is written before any consumer frontier it would be
//     behind, a frontier is never written past the flushed high
//     watermark, and a frontier found above the high watermark is clamped
//     to it, so it never hides records (queue.go);
//   - delivery counts are written after the frontier they go with and a
//     counts file that does not decode never stops the partition
//     (counts.go);
//   - on a topic with ordering "group" a lease round leases only records
//     it has read, in offset order, and hands the lease table each one's
//     key hash, so the table's group rule (package lease, groups.go) sees
//     every record before it is leased (groups.go);
//   - within a topic's dedupe window a partition stores at most one record
//     per producer id, and two concurrent commits never both store one id
//     (dedupe.go, window.go);
//   - every path built here is validated: no topic name from a client can
//     leave the data directory;
//   - a held log with a running role is never evicted idle, and no commit
//     accepted under a role lands in the log after the role stopped
//     (Role.Hold);
//   - a follower keeps the leader's delivery counts and fan-out cursor
//     files as they were at most CountsEvery (plus a fetch) ago, never
//     past its own committed point (sidestate.go);
//   - a held record is settled only after its dead-letter copy is durable
//     in the dead-letter topic (deadletter.go: commit before settle);
//   - a record not due yet is filed in the schedule before the lease
//     table settles it, and the schedule is synced before any frontier
//     that passes it is written; a frontier copied to followers never
//     passes a scheduled record not settled (scheduled.go).
package hosted
