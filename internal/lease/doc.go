// Package lease owns the in-memory lease table of one partition: which
// records are handed out to which consumer until when, which are settled,
// and where the settled prefix (the frontier) ends. It is pure logic: it
// does no I/O (but for the crypto/rand seed of its nonces), reads no
// records, and takes time from an injected clock.Clock (Now only).
//
// What it owns, per partition:
//
//   - the frontier: every offset below it is settled. The caller persists
//     it (FrontierVersion tells when it moved);
//   - live leases: offset -> (nonce, expiry), with an expiry min-heap;
//   - acked-ahead: offsets acked above a gap, at most MaxAckedAhead;
//   - skipped-corrupt: offsets whose frame can never be read, held as
//     ranges and treated as settled;
//   - delivery counts of unsettled offsets;
//   - dead-letter holds: offsets whose deliveries are used up
//     (Limits.MaxDeliveries), neither deliverable nor settled until the
//     caller has committed them to the dead-letter topic (dead.go);
//   - delivery counts of unsettled offsets (DeliveryCount reads one); the
//     caller persists a snapshot (Deliveries) and seeds a new table with it
//     (SeedDeliveries), so counts survive a restart or a move (package hosted);
//   - message groups (groups.go): the group of each outstanding offset a
//     group walk leased, and how many outstanding entries each group has;
//   - the nonce stream (ChaCha8 seeded from crypto/rand) that makes every
//     receipt handle unguessable.
//
// What it does not own: reading records (the caller reserves, then reads,
// then releases or marks skipped on failure; on a topic with message
// groups it reads the candidates first and reserves them after, so that
// the table learns their groups: groups.go), the high-water mark (passed
// to Reserve), persisting the frontier and the counts, timers and waking consumers (the
// caller sweeps with Expire, and wakes consumers when Nack or Release
// succeed or Expire returns more than zero).
//
// Invariants, held between any two method calls (race builds check the
// structural ones after every mutating call and panic at the call that
// broke one; see invariants.go):
//
//  1. At most one live lease per offset, and every live lease is at or
//     above the frontier and below the hwm it was reserved under.
//  2. A lease is live iff now < expiry. Expiry happens exactly one
//     visibility timeout after grant (or the duration the grant asked
//     for: ReserveFor, GroupWalk.Visibility), or the duration given at
//     its last extend after that extend, never earlier; a grant and an
//     extend always set an expiry in the future (a duration <= 0 means
//     the visibility timeout, which Limits.Normalize keeps positive).
//  3. The frontier never decreases. Every offset below it was acked,
//     skipped, or passed over by AdvanceTo.
//  4. Acked-ahead offsets and skipped ranges lie strictly above the
//     frontier (a settled offset at the frontier is absorbed at once), and
//     the two never overlap each other or a live lease.
//  5. The acked-ahead set only grows by Ack while it holds fewer than
//     MaxAckedAhead entries; while it is full, Reserve hands out only the
//     frontier record. Reserve keeps leases above the frontier plus
//     acked-ahead within MaxAckedAhead, so Ack refuses (ErrAckedAheadFull)
//     only after SetLimits lowered MaxAckedAhead under what was out.
//  6. Every lease's nonce is 64 fresh random bits; an Ack, Extend, Nack
//     or Release is accepted only with the nonce of the live lease on that
//     offset, so a stale handle (expired, settled, or superseded) gets
//     ErrGone — ErrSettled, which is also ErrGone, when its record is
//     settled — except with probability 2^-64, a blind guess's odds.
//  7. Reserve (ordering "none") hands out the lowest deliverable offsets, never more than
//     MaxInFlight leases are live because of it, and every unsettled
//     offset below the hwm is deliverable whenever it is not leased and
//     the ack room of 5 allows.
//  8. Every offset in [frontier, cursor) is leased, settled, held for the
//     dead-letter topic, or in the free list (see freelist.go); that is
//     what spares Reserve a rescan.
//  9. An offset held for the dead-letter topic is never leased again and
//     is settled only by SettleDead (the caller committed it to the
//     dead-letter topic first), by retention or a skipped range passing
//     over it, or made deliverable again by ReviveDead. Holds count
//     against the ack room like leases above the frontier.
//  10. Message groups (ordering "group", groups.go): a group walk leases a
//     keyed record only while its group has no outstanding entry (lease or
//     dead-letter hold) other than ones the same walk granted, and never
//     after a record of its group that the walk passed over; so within a
//     group, records are leased in offset order, the next only once every
//     earlier one is settled. Every grouped offset is leased or held, and
//     the per-group counts match them (no group is kept at zero): memory
//     is bounded by the outstanding entries, not the groups ever seen.
//
// Complexity: a group walk (Candidates, ReserveGroups)
// costs O(f log f) for the f offsets in the free list plus O(log n) per
// candidate; the caller reads the candidates, a bounded window.
// Reserve, Ack, AckMany, Extend, Nack and Release are
// O(log n) per lease touched (n = leases out), plus amortised O(1) per
// offset the frontier moves over; AckMany takes the mutex and reads the
// clock once for its whole batch. MarkSkipped and AdvanceTo are
// O(min(width, n)).
// Memory is O(leases + acked-ahead + skipped ranges + freed offsets), all
// bounded by the limits, independent of partition size.
package lease
