// Package wal is a node's ingress write-ahead log for produce.
//
// # What it owns
//
// One directory, <data_dir>/ingress/, and everything in it:
//
//   - segment files NNNNNNNNNNNNNNNNNNNN.wal, named by the 20-digit seq of
//     their first record, holding records back to back (layout in record.go:
//     version 2, which carries the topic's incarnation, is written for a
//     record without headers and version 3, version 2 with headers, for
//     one with; version 1, written by older binaries, is still read, with
//     incarnation 0);
//   - checkpoint, the first seq not known to be committed to its partition
//     (layout in checkpoint.go), replaced by write-temp, fsync, rename, fsync
//     of the directory;
//   - LOCK, flocked while a WAL is open so two processes never share a log;
//   - identity, this WAL's random identity (identity.go), written once:
//     partition logs record which WAL's seqs they hold by it.
//
// Every file call (segments, checkpoint, LOCK, recovery, reads) goes
// through the vfs.FS of Options (nil is the real disk), so tests can fail a
// chosen write, fdatasync, rename or read with errorfs.
//
// A produce request is acknowledged once Append returns: its records are then
// on disk. A dispatcher Reads them from the checkpoint onwards, commits them
// to their partitions and advances the checkpoint with SetCheckpoint, which
// deletes what is no longer needed.
//
// # The invariant
//
// Every record whose Append returned nil is on disk with a seq in one
// contiguous run starting at 1 that never restarts or repeats, and stays
// retrievable by Read until the checkpoint passes it. After a crash the
// records from the checkpoint on are handed out again: the log may yield
// duplicates, never losses.
//
// The rules that keep it:
//
//   - Group commit (wal.go): appenders stage encoded records into one buffer
//     under a mutex held only for memory work; a single syncer goroutine
//     writes the buffer with one write and one fdatasync and then releases
//     exactly the appenders it covered. Once staged, an append waits for that
//     real result even if its context ends. Before taking a batch the syncer
//     may wait, up to Options.GatherWait after its last release, for as many
//     appenders as were in the WAL then (gather.go); it never waits with
//     nothing staged or for a group of one, so a lone appender pays nothing.
//   - Nothing is made visible (LastSeq, Read, Notify) before it is durable.
//   - A failed write or sync fails its group (that batch and the one staged
//     behind it, whose seqs are handed out again) and never anything
//     acknowledged. A full disk (ErrNoSpace) seals the active segment at its
//     durable end and appends keep being tried, in a fresh segment, until
//     space exists. A failed fdatasync or other write error fences the WAL
//     (ErrFenced, Health): appends are refused until the syncer has re-read
//     the active segment from disk, cut it at its durable end and fsynced it
//     and the directory; acknowledged records found damaged keep the fence
//     until a restart (heal.go).
//   - Recovery (recover.go) truncates only a torn tail: damage in the last
//     frames of the last segment with no valid record after it, which is a
//     write that never completed and so was never acknowledged. Damage
//     followed by valid records refuses Open with a *CorruptError naming the
//     file and byte position.
//   - No length read from disk is trusted before it is checked against
//     MaxRecordBytes and against the bytes actually present, so corrupt data
//     cannot make recovery or Read allocate without bound.
//   - Segments are deleted only when wholly below a durable checkpoint.
//
// # Concurrency
//
// Append may be called from any number of goroutines. Read and SetCheckpoint
// are meant for one dispatcher goroutine but are safe concurrently with
// everything else. Lock order: ckMu, readMu, mu.
package wal
