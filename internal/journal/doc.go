// Package journal is a node's redo log for the held partition logs of
// replicated topics (package storage, Options.Journal). Every copy on the
// node appends the frames it writes to one journal file, so that one
// fdatasync of that file makes the writes of many partitions durable at
// once, where each partition log would otherwise fdatasync its own
// segment file: the ingress WAL's group commit (package wal), for the
// copies of replicated partitions, which skip that WAL (docs/replication.md).
//
// # What it owns
//
// One directory, <data_dir>/journal/, and its files
// NNNNNNNNNNNNNNNNNNNN.journal (20 digits, ascending), each holding entries
// back to back (entry.go). An entry is either a write — "these bytes
// belong at this position of this file" — or a forget — "the writes
// before me to files of this directory no longer count". Paths are
// relative to the data directory.
//
// # The invariants
//
//	a write that Write acknowledged is durable: in a journal file, or,
//	once that file is removed, in the file the write names, fdatasynced
//	by its owner (Owner.SyncJournaled) before the removal;
//
//	replay applies, in journal order, exactly the writes that no later
//	forget of their directory covers, and only to files that exist: it
//	never creates a file.
//
// They hold because the owner of a directory (a held storage.Log) keeps
// two promises: the file a write names exists durably (its directory
// fsynced) before the write; and before it truncates or removes a file of
// the directory, or closes, it makes its files durable and forgets the
// directory (Forget). So replay can never put stale bytes into a file that
// was cut, removed or made anew since.
//
// Open replays what the last process left — every write no forget covers
// is put back and its file fdatasynced — and removes the old journal
// files, before any partition log opens. When the active file passes
// Options.MaxBytes the journal rotates: new writes go to a new file, every
// owner with writes in the older ones makes them durable in its own files,
// and the older files are removed. Restore puts one directory's writes
// back while the node runs, for a log that reopens after its own
// fdatasync failed (the kernel may have dropped the pages the journal
// still holds).
//
// A failed write (a full disk) is cut off again and refused, and the next
// group tries again: no byte of it stays for a replay to read past the
// durable entries. A failed fdatasync, or a cut that fails, fails the
// journal for good: every later Write and Forget returns the error, since
// the kernel may have dropped pages it could not write and report that
// only once. The node then acknowledges no replicated write until it
// restarts.
package journal
