// Package errorfs is a fault-injecting vfs.FS for tests: it passes every
// call to an inner FS (usually vfs.Default on a temporary directory) until
// a Rule matches, and then fails that call with the rule's error, the way
// the kernel would (ENOSPC on a write, EIO on an fdatasync, …).
//
// # The invariant
//
// A call no rule matches behaves exactly as the inner FS; a call a rule
// matches returns an error wrapping the rule's error (so errors.Is(err,
// syscall.ENOSPC) holds) and, unless the rule asks for a torn write or for
// unsynced data to be lost, leaves the disk as it was before the call (a
// Corrupt rule instead lets a read succeed with one bit flipped).
// Rules count only the calls they match, so "the third fdatasync of the
// active segment" is expressible and repeatable. LoseUnsyncedWrites is a
// power cut: every write no successful sync covered is undone, so a test
// can tell written from durable (crash.go). UnsyncedEntries lists the
// directory entries (mkdir, create, rename) whose parent directory was
// not fsynced since: what a power cut could still take away (dirsync.go).
package errorfs
