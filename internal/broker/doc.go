// Package broker is a node's data plane at the level of requests: topic
// administration (validate, then a metastore command), produce accept into
// the ingress WAL, the one local commit entry point, queue consume with
// leases, ack/extend/nack, replay, describing, and the background duties
// over the partitions hosted here (retention, idle eviction, frontier
// persistence, lease expiry, orphan cleanup). The per-partition state —
// log, queue, dedupe window, replication role — is package hosted's;
// broker holds one hosted.Set and one hosted.Roles.
//
// Invariants kept here:
//   - produce answers only after the WAL reports the record durable;
//   - a consumer lease is reserved before the record is read, so two
//     consumers never hold the same live lease;
//   - a consume or replay answer holds at most MaxConsumeBytes of keys and
//     payloads (one record always, however large), and every lease out
//     is one an answer handed over: a lease the budget cannot hold is
//     released before the answer leaves, never left to its visibility
//     timeout;
//   - describing a topic never opens a partition log (Peek or directory);
//   - no directory is deleted on this node's word alone: the leader must
//     confirm the topic is gone (the barrier rule when this node leads);
//   - a partition whose log cannot serve (damaged, fenced, failing disk)
//     answers 503 with a reason that names no server path, and the describe
//     says why (package hosted keeps the reason and recovers a fenced log
//     on its next use);
//   - a record held for its dead-letter topic (lease/dead.go) is settled
//     only after its copy is committed there (hosted.DeadLetters: commit before
//     settle, so a crash duplicates a dead letter and never loses one), and
//     a redrive acks a record only after the produce of its copy returned
//     (redrive.go);
//   - a purge (purge.go) moves the frontier only to the high watermark,
//     writes it before it answers, and is refused during a move's freeze
//     like a commit, so no acknowledged purge is undone by a crash or move;
//   - a commit pinned to a topic incarnation lands only in that incarnation
//     (Commit), so a deleted topic's records never reach a re-created one;
//   - while the data disk is full (Config.Disk), produce and topic create
//     are refused with 503 and topic delete still runs, so space can be
//     freed through the API; error messages name no file of the disk.
//
// Of partition moves it knows only the commit-admission hook
// (Config.Admission, move.go) and the few services a move asks of the data
// plane; the moves themselves are package move's.
//
// It knows nothing of HTTP. The refusals other packages act on are typed
// (package refusal): topic not found (or a deleted incarnation), an
// incarnation not known yet, partition out of range, not owner, frozen,
// disk full, fenced — dispatch settles records on them and the edges
// (client API, node RPC) give them their status. Refusals only a client
// reads (validation, conflicts, sizes, ended leases) are typed too
// (refusal.ErrInvalid, ErrConflict, ErrTooLarge, ErrGone, ...): no status
// is chosen below the edges.
package broker
