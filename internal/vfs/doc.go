// Package vfs is the filesystem seam of the durable packages: the
// partition log (storage), the ingress WAL (wal) and the fan-out cursor
// file all do their file I/O through an FS, so a test can put a
// fault-injecting FS (package errorfs) between them and the disk and make
// a chosen write, fdatasync, rename or read fail.
//
// # The invariant
//
// Default behaves exactly as the os package and golang.org/x/sys/unix
// calls it replaces: it adds no buffering, no caching and no retries. A
// package that is correct on the real disk is correct through Default, and
// a failure a test injects is the failure the package would have seen from
// the kernel.
//
// The seam is deliberately small: only the calls the durable packages
// make. Datasync is fdatasync(2) (data and size, not other metadata), Sync
// is fsync(2); SyncDir makes a directory's entries (creates, renames,
// removes) durable. WriteFileAtomic is the one idiom built on them (temp
// file, fsync, rename, directory fsync) that more than one package needs.
package vfs
