// Package replica keeps the copies of a replicated partition
// (docs/replication.md) in step: primary-backup with
// the in-sync set held in the metastore, as Kafka's ISR under KRaft and
// PacificA do, with Kafka's leader epochs for cutting a divergent tail.
//
// One replica leads (meta.Assignment.Owner at LeaderEpoch); the others
// follow by fetching from it (a pull, so catching up after a restart, a
// long outage or an empty disk is the same loop as keeping up). A
// follower's fetch from offset o says "everything below o is durable
// here", so the leader learns acknowledgements from fetches alone. The
// leader serves what it has written (Log.Written), durable here or not
// yet, as the frames its log stores when the follower takes them
// (Log.ReadFrames, Log.AppendFrames: the copy is the leader's bytes) and
// as records otherwise; its own acknowledgement is its durable end
// (Log.End), counted as any follower's.
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
//     it stopped following, after cutting its own log as a follower
//     would) is in the metastore; a returning replica cuts its log at the
//     lowest start of the epochs after the last one it wrote in
//     (TruncationPoint), and never below the committed point: only a
//     never-acknowledged tail is cut;
//   - a leader never writes in an epoch its node began before (a
//     restart): it renews it (meta.RenewEpochCmd) and leads the next, so
//     one epoch's records on the leader come from one process, and its
//     in-sync proposals and committed point are that process's alone;
//   - while an in-sync change is in flight, or a failed proposal may
//     still apply, the committed point is computed over the union of the
//     sets (the stricter one);
//   - a leader whose log is behind what it recorded itself (its start
//     past its end, a follower fetching past its end in its own epoch)
//     lost its disk and stops writing (ErrStateLost);
//   - an acknowledgement counts for the disk it came from: a fetch names
//     the follower's disk id, a change of disk forgets what the old one
//     acknowledged, and an in-sync proposal names each follower's disk,
//     which the metastore must record for a member it adds. A copy joins
//     the in-sync set only with evidence that it holds everything
//     committed: its acknowledged end on that disk at or past the
//     committed point and the epoch's start, in a proposal decided on the
//     set the metastore holds now (meta.SetInSyncCmd: a leader whose view
//     lags would otherwise "keep" a member the metastore already dropped,
//     which for the metastore is an addition without evidence);
//   - a follower writes the epoch mark (replica.state's LastEpoch) before
//     the first record of that epoch: a record on disk is never dated by
//     an older epoch than its own, or a wiped follower (last epoch 0)
//     would take it for history from before replication and no epoch
//     change would cut it. A node whose
//     disk was replaced leaves every in-sync set when the metastore learns
//     it (meta.ReplaceDisk); a leader outside its own in-sync set serves
//     nothing (ErrStateLost) until another is elected;
//   - readers see only committed records (the log's visible high watermark
//     is the committed point, not the local end), so no reader ever sees a
//     record a failover could take back;
//   - the state beside the log that follows the leader (the consumer
//     frontier, and SideState: delivery counts and fan-out cursor
//     positions) reaches a follower clamped to its visible high watermark,
//     so no copied position ever points past what this replica committed;
//     SideState is sent only when its version differs from the follower's
//     echo, and echoed only once the follower took it.
//
// A follower notes since when its fetches fail to reach its leader
// (reach.go: a timeout or a broken connection, not an empty answer nor a
// refusal the leader wrote); its node reports that to the controller,
// which alone decides whether the leader is lost (package cluster).
//
// Leader and Follower are driven by loops (Start, Run) around single
// steps (begin and tick, prepare and apply); the model test in this
// package calls the steps itself so that every interleaving of fetches,
// answers, crashes, elections and wiped disks is its choice.
package replica
