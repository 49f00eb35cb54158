// Package schedule owns the durable timer index of one partition's
// scheduled records (docs/concepts.md, "Scheduled delivery"): which
// offsets wait for a due time, kept on disk so that a million records
// scheduled an hour ahead cost neither memory nor CPU until they fall due.
//
// A record's due time is part of the record (its narad-deliver-at
// header), so the index is derived data: it only spares the queue from
// keeping, or re-reading, records that are not due. The queue adds an
// entry when its lease round meets a record that is not due yet, and may
// let its consumer frontier pass that record only once the entry is
// durable (Index.Sync before the frontier is written); it settles the
// entry when the record is acked, dead-lettered or gone.
//
// On disk, flat in the partition's directory (so a move carries it; the
// names and why their order matters are in files.go):
//
//   - bucket files, one per minute of due time (sched.m<minute>),
//     append-only fixed-size entries: an add (offset, due) or a settle of
//     an offset. A bucket is read whole when its minute comes within
//     Horizon of the clock, and removed once every add in it is settled;
//   - one journal (sched.journal), which every Sync appends to and
//     fsyncs once, however many buckets the entries go to. Bucket files
//     are written at Sync but fsynced only at a checkpoint, after which
//     the journal is emptied; opening replays the journal into the buckets
//     first. So one fsync makes a Sync durable, not one per bucket.
//
// Every entry carries a CRC-32C; a torn entry at a file's end (a crash
// mid-append) is cut off when the index opens, and damage elsewhere
// refuses the open with an error naming the file.
//
// Invariants:
//   - an entry added before a Sync that returned nil is found again after
//     any crash, until it is settled (Settle) or cleared (Clear);
//   - Pop never returns an entry before its due time on the index's
//     clock, and returns each entry added at most once per life of the
//     Index (a settle lost in a crash makes a record due again: at least
//     once, never lost);
//   - memory holds the entries of the buckets within Horizon that are not
//     popped yet, the popped ones not settled, and a few numbers per
//     bucket file: never the entries of later buckets;
//   - nothing here reads the partition log.
package schedule
