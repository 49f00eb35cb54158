package lease

import (
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// Lease is one delivery of one record: the caller reads the record at
// Offset and hands the consumer the receipt handle (see Handle).
type Lease struct {
	Partition int
	Offset    uint64
	Nonce     uint64
	Expiry    time.Time
	// DeliveryCount is how many times this table has leased Offset,
	// counting this one (1 on first delivery). Release undoes its count.
	DeliveryCount int
}

// Handle returns the receipt handle for l.
func (l Lease) Handle() string { return FormatHandle(l.Partition, l.Offset, l.Nonce) }

// Table is the lease state of one partition. It is safe for concurrent use;
// every method takes the one mutex, and (apart from the rare range
// operations MarkSkipped and AdvanceTo) does O(log n) work per lease it
// touches, n being the number of leases out.
type Table struct {
	mu sync.Mutex

	partition int
	clock     clock.Clock // only Now is used: expiry is lazy, swept by the caller
	limits    Limits

	// frontier: every offset below it is settled. version counts its moves
	// so the caller can persist it lazily.
	frontier uint64
	version  uint64

	leases   map[uint64]*entry // live leases by offset
	expiries expiryHeap        // the same entries, earliest expiry first

	ackedAhead map[uint64]struct{} // acked above a gap; all > frontier
	skipped    skipSet             // skipped-corrupt ranges; all start > frontier

	// deliveries counts leases handed out per offset. An offset has an
	// entry only while it is unsettled and has been delivered, so the map
	// is bounded by the leases out plus the freed offsets awaiting
	// redelivery (both bounded by the in-flight cap over time).
	deliveries map[uint64]int
	// countsVersion is bumped whenever deliveries changes, so the caller
	// persists a snapshot only when it moved (package hosted).
	countsVersion uint64

	// dead holds offsets whose deliveries are used up, waiting to be
	// committed to the dead-letter topic before they are settled (dead.go).
	dead map[uint64]*Dead

	// cursor and free make Reserve cheap: every offset in [frontier,
	// cursor) is leased, settled, or in free. See freelist.go.
	cursor uint64
	free   freeList

	// Message groups (groups.go): the group of each outstanding offset a
	// group walk leased, outstanding entries per group, and a counter of
	// offsets made free, by which a walk knows it raced with one.
	grouped  map[uint64]uint64
	groupOut map[uint64]groupState
	freeGen  uint64
	walks    uint64

	// nonces draws every lease's nonce: a ChaCha8 stream seeded from
	// crypto/rand when the table is made, so a handle cannot be guessed
	// from another one (a consumer who saw offset 41's handle learns
	// nothing about offset 42's).
	nonces *rand.ChaCha8

	// capped: the last Reserve held back because of a cap (in-flight,
	// ack room, or frontier-only mode), so a consumer may be waiting for
	// room rather than for records. freed: an Ack has since made room;
	// TakeFreed reports it once, so the caller wakes waiters once per
	// episode instead of on every ack.
	capped, freed bool

	// spare recycles lease entries: a busy partition grants and settles
	// thousands per second, and reusing them removes the one allocation
	// per lease. Bounded by spareMax so a burst does not pin memory.
	spare []*entry

	unreportedExpired int // expiries Expire has not yet reported

	// Cumulative counters for Stats.
	expiredTotal     uint64
	skippedTotal     uint64
	deferredTotal    uint64 // records settled by Defer (deferred.go)
	retentionDropped uint64
}

// New returns the lease table of partition, whose persisted frontier is
// frontier (every offset below it is already settled).
//
// Every lease gets a nonce of 64 random bits from a stream seeded from
// crypto/rand here, so receipt handles cannot be guessed — not from
// another handle, not from the time. A stale handle (expired, settled,
// superseded, or from a previous life of the partition, whose table had
// another seed) matches a new lease of its offset only if the two nonces
// collide: with probability 2^-64, the same as a blind guess.
//
// Invalid limits are clamped with Limits.Normalize.
func New(partition int, frontier uint64, limits Limits, clk clock.Clock) *Table {
	limits = limits.Normalize()
	clk = clock.Or(clk)
	return &Table{
		partition:  partition,
		clock:      clk,
		limits:     limits,
		frontier:   frontier,
		cursor:     frontier,
		leases:     make(map[uint64]*entry),
		ackedAhead: make(map[uint64]struct{}),
		deliveries: make(map[uint64]int),
		nonces:     newNonceStream(),
	}
}

// newNonceStream seeds a ChaCha8 stream from crypto/rand (which never
// fails on a supported platform: it panics rather than return weak bits).
func newNonceStream() *rand.ChaCha8 {
	var seed [32]byte
	crand.Read(seed[:])
	return rand.NewChaCha8(seed)
}

// Partition returns the partition this table was created for.
func (t *Table) Partition() int { return t.partition }

// Limits returns the limits in force (after Normalize).
func (t *Table) Limits() Limits {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limits
}

// SetLimits changes the limits of a live table. Existing leases keep their
// expiry; a new visibility timeout applies from the next Reserve, or
// Extend without a duration of its own.
// Lowering MaxInFlight below the leases out only stops new reserves until
// enough settle; lowering MaxAckedAhead below the set's size only refuses
// new acks above the gap (and puts Reserve in frontier-only mode).
// Invalid limits are clamped with Limits.Normalize.
func (t *Table) SetLimits(l Limits) {
	l = l.Normalize()
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	t.limits = l
}

// Reserve leases up to want records below hwm (the partition's high-water
// mark: the offset the next append will get), lowest offsets first, and
// returns them. It returns nothing when MaxInFlight leases are already out.
//
// The caller reads each record after Reserve returns; if a read fails it
// must Release the lease (transient error) or MarkSkipped the offset
// (the frame can never be read). Reserving before reading is what makes
// it impossible for two consumers to hold the same live lease.
//
// It hands out a record above the frontier only while its ack would fit
// in the acked-ahead set (leases above the frontier + acked-ahead ≤
// MaxAckedAhead), so acks are not refused in steady state. While the set
// is full — possible once MaxAckedAhead is lowered — Reserve hands out
// only the record blocking the frontier (the frontier offset itself, if
// not leased), since only settling that record can make room.
//
// Cost: O((k + e) log n) for k leases returned and e leases expired by the
// purge, plus one step per skipped range crossed. Offsets already leased
// are never rescanned.
func (t *Table) Reserve(hwm uint64, want int) []Lease {
	return t.ReserveFor(hwm, want, 0)
}

// ReserveFor is Reserve with leases that live d (for one consume that
// asks for its own visibility), or the visibility timeout when d <= 0.
// The table's limits are not changed: the next Reserve's leases live the
// timeout again.
func (t *Table) ReserveFor(hwm uint64, want int, d time.Duration) []Lease {
	t.mu.Lock()
	defer t.unlock()
	now := t.clock.Now()
	t.purge(now)
	expiry := now.Add(t.limits.visibility(d))

	room := t.limits.MaxInFlight - len(t.leases)
	n := min(want, room)
	t.capped = n < want
	if n <= 0 {
		return nil
	}
	if t.unsticking() {
		t.capped = true
		return t.reserveFrontier(hwm, expiry)
	}
	// Ack room: a lease is handed out only if its ack can be accepted.
	// An ack above the frontier joins acked-ahead, so the leases above
	// the frontier plus the acked-ahead set stay within MaxAckedAhead
	// (the frontier record itself is always ackable). Backpressure thus
	// shows at consume — fewer records, or none — and an ack is refused
	// only after MaxAckedAhead was lowered under what is already out.
	ackRoom := t.limits.MaxAckedAhead - len(t.ackedAhead) - t.leasesAboveFrontier()
	ackable := func(x uint64) bool {
		if x == t.frontier {
			return true
		}
		if ackRoom <= 0 {
			t.capped = true
			return false
		}
		ackRoom--
		return true
	}

	var out []Lease
	// Offsets freed below the cursor come first: they are lower than
	// anything the cursor scan can find.
	for len(out) < n {
		x, ok := t.free.min()
		if !ok || x >= hwm {
			break
		}
		if !t.isFree(x) {
			t.free.pop()
			continue // stale: settled by MarkSkipped since it was freed
		}
		if t.exhausted(x) {
			t.free.pop()
			t.hold(x, ReasonExpired) // MaxDeliveries was lowered under its count
			if x != t.frontier {
				ackRoom-- // its settle will join acked-ahead
			}
			continue
		}
		if !ackable(x) {
			return out // the cursor scan below would only find higher offsets
		}
		t.free.pop()
		out = t.grant(out, n, x, expiry)
	}
	// Then offsets never handed out before, from the cursor up.
	x := max(t.cursor, t.frontier)
	i := t.skipped.search(x)
	for len(out) < n && x < hwm {
		if i < len(t.skipped.spans) && t.skipped.spans[i].lo <= x {
			x = t.skipped.spans[i].hi
			i++
			continue
		}
		// At or above the cursor (and the frontier) an offset outside the
		// skipped ranges is never leased, acked-ahead or held: all of
		// those were leased once, and every lease is below the cursor
		// (invariant 8). So there is no isFree here: its two map lookups
		// per fresh lease were a tenth of Reserve. Race builds check.
		if assertInvariants && !t.isFree(x) {
			panic(fmt.Sprintf("lease: partition %d: offset %d at or above cursor %d is not free", t.partition, x, t.cursor))
		}
		if t.exhausted(x) {
			// A count carried over from an earlier life of the partition:
			// its last lease ended with that life.
			t.hold(x, ReasonExpired)
			if x != t.frontier {
				ackRoom--
			}
			x++
			continue
		}
		if !ackable(x) {
			break
		}
		out = t.grant(out, n, x, expiry)
		x++
	}
	t.cursor = max(t.cursor, x)
	return out
}

// reserveFrontier is Reserve in unstick mode: only the frontier record.
func (t *Table) reserveFrontier(hwm uint64, expiry time.Time) []Lease {
	f := t.frontier
	if f >= hwm {
		return nil
	}
	if _, leased := t.leases[f]; leased || t.isDead(f) {
		return nil
	}
	// f is the lowest offset the free list can hold; take it out so it is
	// not handed out again from there later.
	t.free.dropBelow(f)
	if x, ok := t.free.min(); ok && x == f {
		t.free.pop()
	}
	t.cursor = max(t.cursor, f+1)
	if t.exhausted(f) {
		t.hold(f, ReasonExpired)
		return nil
	}
	return t.grant(nil, 1, f, expiry)
}

// grant leases offset x under a fresh nonce until expiry (in the future:
// now plus a positive duration) and appends it to out, which is
// allocated on first use for n leases (capped, because n may be far
// larger than what is actually available).
func (t *Table) grant(out []Lease, n int, x uint64, expiry time.Time) []Lease {
	var e *entry
	if k := len(t.spare); k > 0 {
		e = t.spare[k-1]
		t.spare = t.spare[:k-1]
	} else {
		e = new(entry)
	}
	*e = entry{offset: x, nonce: t.nonces.Uint64(), expiry: expiry}
	t.leases[x] = e
	t.expiries.add(e)
	dc := t.deliveries[x] + 1
	t.deliveries[x] = dc
	t.countsVersion++
	if out == nil {
		out = make([]Lease, 0, min(n, 256))
	}
	return append(out, Lease{
		Partition:     t.partition,
		Offset:        x,
		Nonce:         e.nonce,
		Expiry:        e.expiry,
		DeliveryCount: dc,
	})
}

// Release undoes a reservation whose read failed: the lease is dropped,
// the record is available again at once (like Nack, a nil error means a
// waiting consumer can be woken), and the delivery is not counted. It
// returns ErrGone if (offset, nonce) is not a live lease.
func (t *Table) Release(offset, nonce uint64) error {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	e, err := t.live(offset, nonce)
	if err != nil {
		return err
	}
	t.dropLease(e)
	if c := t.deliveries[offset] - 1; c > 0 {
		t.deliveries[offset] = c
	} else {
		delete(t.deliveries, offset)
	}
	t.countsVersion++
	t.markFree(offset)
	return nil
}

// Ack settles offset. It is accepted only for the live lease with this
// nonce; otherwise it returns ErrGone (expired, already settled, nacked,
// or leased again under a newer nonce). An ack above a gap joins the
// acked-ahead set, or, if that set is full, is refused with
// ErrAckedAheadFull and the lease stays live so the consumer can retry.
func (t *Table) Ack(offset, nonce uint64) error {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	return t.ackLocked(offset, nonce)
}

// TakeFreed reports, once, that an Ack made room after a Reserve was held
// back by a cap: consumers parked on this partition should look again
// (nothing else wakes them when no record arrives).
func (t *Table) TakeFreed() bool {
	t.mu.Lock()
	defer t.unlock()
	f := t.freed
	t.freed = false
	return f
}

// Extend renews the live lease (offset, nonce) to expire d from now —
// shorter or longer than the visibility timeout, which is what d <= 0
// stands for — or returns ErrGone. The lease stays live until then, so
// an extend never ends a lease: to give it up now, Nack.
func (t *Table) Extend(offset, nonce uint64, d time.Duration) error {
	t.mu.Lock()
	defer t.unlock()
	now := t.clock.Now()
	t.purge(now)
	e, err := t.live(offset, nonce)
	if err != nil {
		return err
	}
	e.expiry = now.Add(t.limits.visibility(d))
	t.expiries.fix(e.index)
	return nil
}

// Nack gives up the live lease (offset, nonce): the record is available
// for redelivery at once — or, when its deliveries are used up
// (Limits.MaxDeliveries), held for the dead-letter topic (dead.go). A nil
// error therefore means at most one more record is deliverable now, and
// the caller should wake a waiting consumer. Otherwise it returns ErrGone.
func (t *Table) Nack(offset, nonce uint64) error {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	e, err := t.live(offset, nonce)
	if err != nil {
		return err
	}
	t.dropLease(e)
	t.lapse(offset, ReasonNacked)
	return nil
}

// Expire purges expired leases and returns how many leases expired since
// the previous call to Expire, including those purged as a side effect of
// other calls (every method purges first). The caller runs it from a
// periodic sweep (or a timer set from NextExpiry) and wakes waiting
// consumers when it returns more than zero, so a lease purged lazily by,
// say, an Ack still leads to a wake-up.
//
// A lease expires when now >= its expiry: exactly one visibility timeout
// (or the duration ReserveFor was given) after it was granted, or the
// duration given at its last Extend after that extend, not earlier.
func (t *Table) Expire() int {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	n := t.unreportedExpired
	t.unreportedExpired = 0
	return n
}

// NextExpiry returns when the earliest live lease expires; ok is false
// when no lease is out.
func (t *Table) NextExpiry() (at time.Time, ok bool) {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	if e := t.expiries.peek(); e != nil {
		return e.expiry, true
	}
	return time.Time{}, false
}

// purge drops every lease whose expiry is at or before now.
func (t *Table) purge(now time.Time) {
	for {
		e := t.expiries.peek()
		if e == nil || now.Before(e.expiry) {
			return
		}
		off := e.offset
		t.dropLease(e)
		t.lapse(off, ReasonExpired)
		t.unreportedExpired++
		t.expiredTotal++
	}
}

// live returns the lease at offset if its nonce matches, else ErrGone —
// ErrSettled when the record is settled already, so that a second ack of
// one handle can say so. Callers purge first, so a returned lease has not
// expired.
func (t *Table) live(offset, nonce uint64) (*entry, error) {
	e := t.leases[offset]
	if e != nil && e.nonce == nonce {
		return e, nil
	}
	if e == nil && t.settled(offset) {
		return nil, ErrSettled
	}
	return nil, ErrGone
}

// settled reports whether offset needs no more delivery: below the
// frontier, acked above a gap, or skipped as unreadable.
func (t *Table) settled(x uint64) bool {
	if x < t.frontier || t.skipped.contains(x) {
		return true
	}
	_, ok := t.ackedAhead[x]
	return ok
}

// spareMax bounds the recycled entries kept (about 64 KiB).
const spareMax = 1024

// dropLease removes e from the table and recycles it; callers must not
// use e afterwards (copy what they need first).
func (t *Table) dropLease(e *entry) {
	t.expiries.remove(e)
	delete(t.leases, e.offset)
	if len(t.spare) < spareMax {
		t.spare = append(t.spare, e)
	}
}

// markFree records that x (>= frontier, unsettled) is deliverable again.
// Offsets at or above the cursor will be found by the scan anyway.
func (t *Table) markFree(x uint64) {
	t.ungroup(x)
	t.freeGen++
	if x < t.cursor {
		t.free.push(x)
	}
}

// isFree reports whether x can be leased: not settled and not leased.
func (t *Table) isFree(x uint64) bool {
	if x < t.frontier {
		return false
	}
	if _, ok := t.leases[x]; ok {
		return false
	}
	if _, ok := t.ackedAhead[x]; ok {
		return false
	}
	return !t.isDead(x) && !t.skipped.contains(x)
}

// leasesAboveFrontier counts live leases other than one on the frontier
// record: the leases whose acks would join acked-ahead — and the offsets
// held for the dead-letter topic, whose settles will.
func (t *Table) leasesAboveFrontier() int {
	n := t.deadAboveFrontier()
	if _, ok := t.leases[t.frontier]; ok {
		return n + len(t.leases) - 1
	}
	return n + len(t.leases)
}

// unsticking reports whether the acked-ahead set is full, in which case
// only settling the frontier record can make progress.
func (t *Table) unsticking() bool {
	return len(t.ackedAhead) >= t.limits.MaxAckedAhead
}
