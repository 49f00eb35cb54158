// Package storage is the partition log: an append-only sequence of records
// with offsets 0, 1, 2, … kept in segment files of CRC'd frames.
//
// It knows nothing of topics, HTTP or clusters. Its one promise is the
// durability boundary (docs/architecture.md, "The produce path"), in two
// forms:
//
//	a record is visible to readers (below the high watermark) only after the
//	frame holding it was written, read back and CRC-verified, and either
//	fsynced (Commit) or durable elsewhere: a lazy CommitFrom, whose records
//	are in an ingress WAL that the caller keeps until Flush has fsynced them.
//
// A held log (Options.Held: a replica of a replicated partition, package
// replica; held.go) adds one rule to that boundary:
//
//	on a held log nothing is visible past what Release allowed, and Release
//	never passes End.
//
// Its commits and Appends (a leader's records, with their offsets and
// commit times) are synchronous — read back, verified and durable, by an
// fdatasync of the segment or, with Options.Journal, by the node's
// journal (journal.go) — and move End, the local durable end, but not
// the HWM readers see (Read, Notify, consume, replay, fan-out); Release
// moves the HWM up to the committed point a quorum holds, never down. A
// commit's frames are published to ReadTo (Written, a follower's fetch)
// once written and verified, before they are durable; End follows when
// they are. TruncateTo cuts a never-committed tail (never below the
// HWM); truncate.go says why each of its steps leaves a directory that
// reopens consistent, the hwm file's claim lowered first. A held log
// reopens with its HWM at min(replica.state's committed checkpoint, End),
// raised to the consumer frontier when that is higher and within End (a
// frontier is written only below what readers saw: a committed point too).
// On a log that is not held End == HWM and nothing of this applies.
//
// The log keeps a flushed high watermark beside the published one (Flushed
// <= HWM): everything below it is on disk. Lazy frames only ever sit in the
// active segment past it — a synchronous commit's fdatasync, Flush, a roll,
// Close and the listing a copy takes (Files, Published) all bring it up to
// the HWM first — and nothing durable about the log speaks past it: the hwm
// file records only the flushed high watermark (on a held log the flushed
// End, released or not: it says what the disk holds), and the broker's
// consumer frontier and fan-out's cursor files are flushed or clamped to
// it. A power
// cut can therefore take back only a lazy tail, which recovery cuts (also a
// tail with a hole: a bad frame followed only by lazy frames, past the hwm
// file's claim), never reporting it as a shortfall; the WAL puts its
// records back (package dispatch says why at the same offsets). A failed
// fdatasync while lazy frames were unflushed fences the log until it is
// reopened (Recover refuses): those frames may be gone from the disk.
//
// Frames of records from an ingress WAL carry their source (frame.go): the
// WAL's identity and the highest WAL seq they hold. CommitFrom skips
// records at or below the highest seq the log holds from that WAL — Open
// recovers it from the frames — so re-dispatching a window after a crash
// commits exactly what the log lacks. Open fdatasyncs the recovered active
// segment first: a crashed process may have left lazy frames only in the
// page cache, and the WAL is released past what the log holds.
//
// Such frames also carry every record's own WAL seq (frame.go, the ids
// flag; ids.go), as do frames of records committed from another node's
// WAL and a held log's Append of them, so a record's message id (package
// messageid) is derived from what the frame holds and reads back the same
// after a restart, a move or a failover; records without them (older
// frames, commits from no WAL) take their ids from their offsets.
//
// A commit's batch becomes visible all at once or not at all, and commit
// times never decrease along a partition — not within a process and not
// across a reopen, because Open recovers the floor from the newest record
// (and a truncation from the newest record it keeps: a cut tail's times
// bind nothing after it). A clock stepped back stamps that floor until
// it catches up (Kafka's max-timestamp-so-far, taken at write time), so
// OffsetAtTime (timeseek.go) finds the first record at or after a time by
// bisection over segments and index entries, never a scan from the start.
// Every caller of Commit gets an answer, whatever fails.
//
// Offsets never go backwards, not even after damage (a held log's End goes
// back only by TruncateTo, and only over records never visible): recovery compares what
// the segments hold with the hwm file (written only after records were
// published) and, when records are missing, logs the loss naming the file
// and offsets, reports it (Hooks.Shortfall) and continues at the recorded
// high watermark; readers see the lost range as a gap (Read's Skipped), not
// as the end of the log.
//
// A record's envelope (record.go) is version 0x02 without headers — the
// bytes binaries before headers wrote — and 0x03 with them; both are
// read, and a decoder bounds every length it reads by the bytes left.
//
// Layout of a partition directory:
//
//	00000000000000000000.log   sealed segment, named by its first offset
//	00000000000000450832.log   active segment (the last one)
//	hwm                        durable high watermark (+ boundary on clean close)
//	consumer.offset            consumer frontier (written by the broker)
//	delivery.counts            delivery counts of unsettled records (the broker; countsfile.go)
//	replica.state              held logs only: last epoch written in, committed checkpoint (replicastate.go)
//
// Recovery truncates a torn tail of the active segment — bytes past the
// recorded high watermark, never acknowledged — and refuses to open
// (*CorruptError) when a bad frame is followed by valid ones (acknowledged
// data must never be truncated), unless Options.SkipCorrupt. Readers verify
// every frame they decode and skip an unreadable range instead of wedging,
// counting and logging each skipped record once.
//
// Damage is bytes that read back wrong (errBadFrame, a file cut short:
// read.go's damaged), never a read that failed. A failed read (EIO) is an
// error wherever it happens — a reader's, recovery's, a retention pass's,
// a listing's — so nothing is skipped, truncated, deleted or left out
// because the disk did not answer once.
//
// I/O errors follow the sticky-failure rule (fence.go): a failed write is
// undone and may be retried (a full disk heals once space exists); a failed
// fdatasync or read-back fences the log — commits are refused with
// ErrFenced, the unverified tail is cut, and Recover continues in a fresh
// segment file, never writing the fenced one again. The hwm file and
// consumer.offset are rewritten whole each time, so their failures fence
// nothing: the next write replaces them.
//
// A partition directory as a whole (partdir.go, stage.go) is this
// package's too: its name (PartitionDirName, the one place "p%05d" is
// written), the listing a copy takes (Log.Files: never the active
// segment's bytes past the published frames), and a Stage that assembles
// a copy elsewhere, is verified by reopening it and reading every record
// (Verify: opening alone checks only the active segment), and becomes the
// partition by one rename (Install: the stage's entries fsynced first, the
// parent after). Whose partition it is, and when a copy may be taken or
// installed, is the caller's (package move).
//
// Every file call goes through Options.FS (package vfs), so tests can fail
// any of them through errorfs.
package storage
