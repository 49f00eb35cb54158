// Package replica keeps the copies of a replicated partition
// (09-extensions.md, "Replicated partitions") in step: primary-backup with
// the in-sync set held in the metastore, as Kafka's ISR under KRaft and
// PacificA do, with Kafka's leader epochs for cutting a divergent tail.
//
// One replica leads (meta.Assignment.Owner at LeaderEpoch); the others
// follow by fetching from it (a pull, so catching up after a restart, a
// long outage or an empty disk is the same loop as keeping up). A
// follower's fetch from offset o says "everything below o is durable
// here", so the leader learns acknowledgements from fetches alone.
//
// Invariants:
//   - acknowledged means committed: a record is acknowledged (its commit
//     returns, the produce answers 202) only once every member of the
//     in-sync set holds it durably and the set has at least a majority of
//     the replicas; the committed point (the high watermark the leader
//     releases to readers, Log.Release) never passes such a record;
//   - the in-sync set never shrinks below a majority on the leader's word
//     (the leader waits, and produce answers 503, instead), and only the
//     current epoch's leader changes it (SetInSync is epoch-checked where
//     the metastore applies it); a leader is chosen only from it, so the
//     new leader holds every acknowledged record;
//   - a follower fetches only from the leader of the epoch it knows, and a
//     leader serves only fetches of its own epoch: a deposed leader can
//     neither gather acknowledgements nor release records;
//   - a new leader writes nothing before its EpochStart (its log end when
//     it stopped following) is in the metastore; a returning replica cuts
//     its log to the start of the first epoch after the last one it wrote
//     in (TruncationPoint), and never below the committed point: only a
//     never-acknowledged tail is cut;
//   - readers see only committed records (the log's visible high watermark
//     is the committed point, not the local end), so no reader ever sees a
//     record a failover could take back.
package replica
