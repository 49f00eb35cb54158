// Package dispatch drains the ingress WAL into partition logs: it reads a
// window of accepted records from the checkpoint, buckets them by
// (topic, partition), commits each bucket through the route seam (up to 16
// at once, one route.Pass per window), and moves the WAL checkpoint past
// what is committed. Its pacing (idle poll, cycle spacing, retry backoff,
// checkpoint cadence) runs on Dispatcher.Clock; a cycle whose window was not
// full is followed by a pause as long as its commit took (capped), so
// partition commits take at most half the time, and, when the cycle made
// an fdatasync, of at least minCycle, so a trickle of records does not
// spend the disk's fsyncs a few records each. It checkpoints on its
// cadence, busy or caught up, never at every catching up.
//
// One fsync per record path (the WAL is the partition logs' journal, as
// in BookKeeper): a record is fsynced in the ingress WAL before its 202.
// With Lazy, a bucket committed to a partition this node owns, not
// rerouted, is committed without the partition's fdatasync — written,
// read back, CRC-verified, visible — and the checkpoint cadence flushes
// every log holding such commits before the checkpoint may pass them.
// Every other commit (owned elsewhere, rerouted, fan-out's, and any
// commit while a reroute from that partition is above the checkpoint)
// fsyncs first, which also flushes the lazy frames before it.
//
// Invariants:
//   - the checkpoint never passes a record that is not committed to its
//     partition and, when committed lazily, flushed there;
//   - commits to partitions owned here carry the WAL's identity and each
//     record's seq, and the log skips those it holds already: a crash
//     between a commit and the checkpoint re-reads the window and commits
//     exactly what the logs lack (no duplicates; forwarded and rerouted
//     commits carry no source and may still repeat after a crash);
//   - no reader ever sees a record that could later vanish or change
//     offset. After a SIGKILL the page cache keeps lazy frames (Open
//     fsyncs them). After a power cut a log holds its flushed prefix and
//     loses its lazy tail, and the tail comes back identically: a
//     partition's commits after its last fdatasync are all lazy (a
//     synchronous one would have flushed them), so the tail holds only
//     this WAL's records for that partition, in WAL order, each seq above
//     the flushed frames' highest; the re-dispatch reads the WAL from the
//     checkpoint (at or below the tail's first seq), skips what the flushed
//     frames hold and commits the rest, in WAL order, before anything else
//     may land there — the broker refuses commits from elsewhere while
//     Replaying says the partition may be owed records of the WAL as it was
//     at start, and a reroute of the partition's records keeps its own
//     commits synchronous until the checkpoint passes them, so no rerouted
//     record is above the checkpoint and unheld when a lazy tail is lost.
//     Same records, same order, same first offset: same offsets. A
//     re-dispatched record is stamped with the time of its new commit (the
//     log's commit-time floor keeps times non-decreasing); what a reader saw
//     before the cut may differ by that much, never the offset or bytes;
//   - a record is discarded only when the owner refused it with a typed
//     refusal.ErrTopicNotFound (the topic, or the record's incarnation, is
//     not there) and its topic incarnation is gone by the leader's word
//     (Discarder), never on this replica's view alone; records
//     carry the incarnation they were accepted for, so those of a deleted
//     topic are never committed into a re-created one of the same name;
//   - records for a partition the owner refuses as out of range
//     (refusal.ErrPartitionRange: the topic was re-created smaller) go to
//     partition mod the current count; decisions are made on these typed
//     refusals only, never on an error's text or HTTP status;
//   - a failing bucket does not block the others: records of healthy
//     partitions commit and are remembered while the failing one retries.
package dispatch
