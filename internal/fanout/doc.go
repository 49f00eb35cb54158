// Package fanout is the fan-out engine (docs/architecture.md, "Fan-out"): for
// each (parent partition, child) link, one cursor on the node that owns the
// parent partition tails its committed log, buckets each slab by child
// partition and commits the buckets through the same commit seam produce
// uses, then advances a 256-byte CRC'd cursor file beside the log.
//
// The whole guarantee is one invariant, kept in cursor.go where the file is
// advanced:
//
//	the cursor's durable offset never passes a record the child has not
//	committed.
//
// A crash repeats the last slab into the child (duplicates), never a gap.
// A cursor file that cannot be written (a full disk, an I/O error, on the
// write or its fdatasync) holds the cursor where its file durably stands:
// it reports no position past that, rewrites the record until the disk
// takes it, and neither exits nor re-commits meanwhile. A file that cannot
// be read or first anchored stops the cursor, and the reconciler starts it
// again on its next tick; an unreadable file is never taken for a missing
// one. All cursor file I/O goes through Config.FS (the vfs seam).
// Around it: attach epochs make "is this my state?" an equality check;
// attach points recorded inside the Raft attach command say where a cursor
// without a file starts; anchoring (writing a start position over a file)
// and deleting cursor files need the Raft leader's confirmation, and the
// orphan sweep never deletes a path a running cursor owns (it re-checks,
// under the lock a cursor takes to own its path, just before removing); a
// delay child's cursor reads only records due on this node's clock and
// sleeps until the first one that is not, which costs O(1) however long
// the backlog (commit times never decrease along a partition). The gate
// compares commit times stamped by whichever node committed a record with
// the clock of the node that owns the parent partition now: after a move,
// delivery is never early on the new owner's clock, and early or late by
// the skew between the two clocks otherwise (F21). Nothing clamps it.
//
// # Seams
//
// The engine reaches the rest of its node only through interfaces it
// declares (seams.go): a LogSource of partition logs, a TopicAdmin, Stats
// and the Metastore; it never imports the broker. Every child commit goes
// through a route.Committer — the node's router for local children, one
// built on the public client for remote ones (remotecommit.go) — in
// route.Pass rounds; the retry policy (epoch checks, re-bucketing, the
// backoff between rounds) stays here. Every rule that depends on time
// (linger, long-poll, the delay gate, backoffs, the reconciler's tick, the
// forced pass) reads Config.Clock, so tests step a clock.Fake instead of
// sleeping.
package fanout
