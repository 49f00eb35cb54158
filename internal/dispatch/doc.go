// Package dispatch drains the ingress WAL into partition logs: it reads a
// window of accepted records from the checkpoint, buckets them by
// (topic, partition), commits each bucket through the route seam (up to 16
// at once, one route.Pass per window), and moves the WAL checkpoint past
// what is committed. Its pacing (idle poll, cycle spacing, retry backoff,
// checkpoint cadence) runs on Dispatcher.Clock; a cycle whose window was not
// full is followed by a pause of at least minCycle and at least as long as
// its commit took (capped), so partition fsyncs take at most half the time.
//
// Invariants:
//   - the checkpoint never passes a record that is not committed to its
//     partition (a crash re-commits the window: duplicates, never loss);
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
