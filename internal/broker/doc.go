// Package broker is a node's data plane: topic administration (validate,
// then a metastore command), produce accept into the ingress WAL, the local
// commit into partition logs, queue consume with leases, ack/extend/nack,
// replay, describing, and the registry of open partition logs with its
// background duties (retention, idle eviction, frontier persistence, lease
// expiry, orphan cleanup).
//
// Invariants kept here:
//   - produce answers only after the WAL reports the record durable;
//   - a consumer lease is reserved before the record is read, so two
//     consumers never hold the same live lease;
//   - describing a topic never opens a partition log (Peek or directory);
//   - no directory is deleted on this node's word alone: the leader must
//     confirm the topic is gone (the barrier rule when this node leads);
//   - a commit pinned to a topic incarnation lands only in that incarnation
//     (CommitIncarnation), so a deleted topic's records never reach a
//     re-created one;
//   - while the data disk is full (Config.Disk), produce and topic create
//     are refused with 503 and topic delete still runs, so space can be
//     freed through the API; error messages name no file of the disk.
//
// It knows nothing of HTTP: errors are apierr values the HTTP layer writes
// as they are.
package broker
