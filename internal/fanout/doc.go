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
// the skew between the two clocks otherwise (rule: skew across a move).
// Nothing clamps it.
//
// # Rules
//
// The engine's rules, each named once here by what it says; comments,
// tests and scripts/mutate/fanout.txt (which breaks them one at a time)
// cite them by these names.
//
// The reconciler:
//
//   - tick every second: every second it compares the links with the
//     running cursors (a full pass).
//   - skip unchanged ticks: a tick skips the full pass while the
//     metastore's domain version has not moved, except after a pass that
//     failed or left work behind, after a cursor exited, on the first tick
//     after the replica caught up again, on sweep ticks, and at least every
//     30 s.
//   - leader-confirmed sweep: every 30th caught-up tick removes cursor
//     files of no current link, each removal confirmed by the Raft
//     leader, never a path a running cursor owns.
//
// A cursor:
//
//   - slab pacing: a slab is at most 4,096 records and 4 MiB of keys and
//     payloads; once it holds a record it lingers 25 ms for more, and an
//     empty parent is long-polled 1 s.
//   - slab order per bucket: each child-partition bucket keeps slab order,
//     so each key keeps its order.
//   - 16 commits in flight: at most 16 buckets of a slab commit at once.
//   - retry alone: a failing bucket gets 3 quick tries (100 ms, then
//     200 ms apart); buckets still failing are copied off the parent log
//     and retried alone after a 1 s backoff.
//   - re-check every round: every retry round re-checks the link's attach
//     epoch and re-buckets under the child's current partition count.
//   - commit before advance: the cursor file is advanced, one write and
//     one fdatasync, only after every bucket of the slab committed.
//   - no reroute: a bucket never goes to a sibling partition; a dead owner
//     stalls it until it returns.
//   - drop-behind: records retention deleted before the cursor read them
//     are stepped over, counted and logged.
//   - filtered links: a link with a filter (package filter, an SNS filter
//     policy over the record's headers or its JSON payload) copies only
//     the records it matches, in slab order; a record it does not match
//     is stepped over exactly as past a copied one and counted
//     (narad_fanout_filtered_messages_total), so commit before advance
//     still holds for every matching record. The cursor reads the filter
//     from the child's record at each slab: a change applies from the
//     next slab. Headers are matched as a map of name to value (a record
//     never holds a name twice). Remote children filter the same way.
//   - enveloped links: a link with an envelope (meta.LinkEnvelope, format
//     "sns") copies each record as Amazon SNS's notification of it, as SNS
//     delivers to an SQS queue without RawMessageDelivery (envelope.go):
//     MessageId is the id the SNS edge answered for the source
//     (awsattr.MessageID of its source id and producer id), Message its
//     payload, Timestamp its commit time, MessageAttributes its
//     attributes (awsattr.Decode); the copy keeps its key and the broker's
//     narad-msg-id and narad-deliver-at, and no other header of the
//     source. The filter matches the source, before wrapping. A copy whose
//     envelope would exceed 1 MiB goes raw, counted
//     (narad_fanout_envelope_skipped_total): the link never stalls on it.
//     Like the filter, the envelope is read from the child's record at
//     each slab; a copy depends on its source record alone, so a repeated
//     slab repeats it byte for byte. A remote child takes none; a link
//     without one pays one nil check per slab.
//   - source ids: every copy carries the reserved header narad-source-id,
//     the message id of the parent record it copies (package messageid;
//     commit.go's withSourceIDs), replacing one the parent record had;
//     the copy keeps no WAL source, so its own id is its position in the
//     child. A remote child receives it as narad.source-id.
//
// Where a cursor starts:
//
//   - attach epochs: each attach gets a fresh random epoch (8 bytes, hex);
//     a cursor file of another epoch is never resumed.
//   - attach points: the attach records each parent partition's committed
//     high watermark, asked of its owner; an owner that cannot answer
//     fails the attach.
//   - cursor file: a 256-byte CRC'd file beside the parent log
//     (cursorfile.go); a corrupt one is no position.
//   - start at the attach point: a cursor without a file of its epoch
//     starts at the recorded attach point, at 0 for a partition added
//     after the attach, and at the live tail for a link recorded before
//     attach points existed.
//   - anchor on the leader's word: writing a start position over a file
//     needs the Raft leader to confirm the epoch is current.
//
// Delay children:
//
//   - delay gate: a delay child's cursor reads only records due on this
//     node's clock (commit time + delay).
//   - sleep until due: with nothing due it sleeps until the first record
//     is, at most 30 s, at O(1) cost however long the backlog.
//   - never early: no record reaches a delay child before it is due.
//   - skew across a move: see above.
//   - due lag: narad_fanout_due_lag_seconds and the listing say how far
//     behind the due frontier a delay child's cursor runs.
//
// What the engine shows:
//
//   - gauges leave with the cursor: a stopping cursor deletes its gauges,
//     so a sum over parent and child counts each partition once.
//   - listing opens no log: the children listing reads open logs and
//     closed partitions' directories, never opening a log.
//
// Remote children (a child topic in another cluster):
//
//   - remote start points: a remote child is created attached in one Raft
//     command, starting at the attach point, the consumer frontier or the
//     oldest retained record.
//   - lanes by key: the sender splits a slab into 4 lanes by key, each one
//     batch produce through the public client.
//   - held records bounded: records held across a target outage are a
//     copy, bounded by one slab.
//   - refusal stops the link: a link shows its state (the worst of its
//     cursors); a record the target refuses stops the link, named by its
//     parent offset, and nothing is skipped without an operator.
//   - acked time: a remote link's recovery point is the commit time of
//     the last record the target acknowledged.
//   - credentials never shown: a target's credentials are stripped from
//     every view; plain http:// is allowed but warned about, and TLS
//     certificates are verified by default.
//
// In race builds (the suite's) the rules a cursor's own state can show
// broken — commit before advance, its offset never moving backward within
// a run, slab order per bucket, a filtered slab keeping exactly the
// records its filter matches — are checked as they run and panic when
// broken (invariants.go); other builds compile the checks away.
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
