package lease

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// Due is the lease table of a partition's scheduled records that have
// fallen due: records the main Table settled with Defer, which the
// partition's schedule hands back (Add) when their time comes. They may
// lie anywhere, below the frontier too, so they are leased here, by
// offset, with the same receipt handles, nonces and visibility timeout as
// the Table's: a consumer cannot tell a scheduled record's lease from any
// other.
//
// Invariants (race builds check them after every mutating call):
//
//  1. every offset held is exactly one of ready (in the queue, not
//     leased), leased, or held for the dead-letter topic, and has its due
//     time recorded;
//  2. a lease is live iff now < expiry, as the Table's; its nonce is 64
//     fresh random bits and only that nonce settles, extends, nacks or
//     releases it;
//  3. an acked offset leaves the table at once, and the caller settles
//     its schedule entry (Ack returns the due time the entry was filed
//     under); a nacked, released or expired lease is ready again, first
//     in line — or, its deliveries used up (Limits.MaxDeliveries), held
//     for the dead-letter topic, as the Table holds its records (dead.go),
//     and settled only by SettleDead after the caller committed it there.
//
// Memory is O(ready + leased): the records due now and not settled,
// which the schedule released only as they fell due.
type Due struct {
	mu        sync.Mutex
	partition int
	clock     clock.Clock
	limits    Limits

	ready    []uint64          // FIFO; a lapsed lease goes back to the front
	due      map[uint64]int64  // every held offset -> its due time (Unix ms)
	leases   map[uint64]*entry // live leases by offset
	expiries expiryHeap
	counts   map[uint64]int   // deliveries per held offset
	dead     map[uint64]*Dead // held for the dead-letter topic (duedead.go)
	nonces   *rand.ChaCha8

	// seeded holds delivery counts loaded from the counts file for
	// records not held yet: a due record taken after a restart goes on
	// counting from its count (SeedDeliveries). countsVersion moves with
	// every change of counts, for the caller's persisting.
	seeded        map[uint64]int
	countsVersion uint64

	unreportedExpired int
}

// NewDue returns an empty due table for partition.
func NewDue(partition int, limits Limits, clk clock.Clock) *Due {
	return &Due{partition: partition, clock: clock.Or(clk), limits: limits.Normalize(),
		due: make(map[uint64]int64), leases: make(map[uint64]*entry), counts: make(map[uint64]int), dead: make(map[uint64]*Dead),
		nonces: newNonceStream()}
}

// SetLimits changes the visibility timeout and in-flight cap, as the
// Table's SetLimits does.
func (d *Due) SetLimits(l Limits) {
	d.mu.Lock()
	defer d.unlock()
	d.limits = l.Normalize()
}

// Add makes offset, due at due (Unix ms), deliverable. An offset held
// already is left as it is.
func (d *Due) Add(offset uint64, due int64) {
	d.mu.Lock()
	defer d.unlock()
	if _, ok := d.due[offset]; ok {
		return
	}
	d.due[offset] = due
	d.ready = append(d.ready, offset)
	if c, ok := d.seeded[offset]; ok {
		d.counts[offset] = c
		delete(d.seeded, offset)
	}
}

// Holds reports whether offset is a due record held here: its acks,
// extends and nacks belong to this table, not the Table.
func (d *Due) Holds(offset uint64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.due[offset]
	return ok
}

// Len reports how many records are ready and how many leased.
func (d *Due) Len() (ready, leased int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.purge()
	return len(d.ready), len(d.leases)
}

// Reserve leases up to want ready records, in the order they fell due,
// within the in-flight cap.
func (d *Due) Reserve(want int) []Lease {
	return d.ReserveFor(want, 0)
}

// ReserveFor is Reserve with leases that live dur, or the visibility
// timeout when dur <= 0, as the Table's ReserveFor.
func (d *Due) ReserveFor(want int, dur time.Duration) []Lease {
	d.mu.Lock()
	defer d.unlock()
	d.purge()
	n := min(want, d.limits.MaxInFlight-len(d.leases), len(d.ready))
	if n <= 0 {
		return nil
	}
	expiry := d.clock.Now().Add(d.limits.visibility(dur))
	out := make([]Lease, 0, n)
	for _, x := range d.ready[:n] {
		e := &entry{offset: x, nonce: d.nonces.Uint64(), expiry: expiry}
		d.leases[x] = e
		d.expiries.add(e)
		d.counts[x]++
		d.countsVersion++
		out = append(out, Lease{Partition: d.partition, Offset: x, Nonce: e.nonce, Expiry: e.expiry, DeliveryCount: d.counts[x]})
	}
	d.ready = append(d.ready[:0], d.ready[n:]...)
	return out
}

// Ack settles the live lease (offset, nonce): the record leaves the table
// and due is the time its schedule entry was filed under, for the
// caller's Settle. ErrGone when it is not a live lease.
func (d *Due) Ack(offset, nonce uint64) (due int64, err error) {
	d.mu.Lock()
	defer d.unlock()
	d.purge()
	e, err := d.live(offset, nonce)
	if err != nil {
		return 0, err
	}
	due = d.due[offset]
	d.forget(e)
	return due, nil
}

// Extend renews the live lease (offset, nonce) to expire dur from now,
// or one visibility timeout from now when dur <= 0, as the Table's
// Extend does.
func (d *Due) Extend(offset, nonce uint64, dur time.Duration) error {
	d.mu.Lock()
	defer d.unlock()
	d.purge()
	e, err := d.live(offset, nonce)
	if err != nil {
		return err
	}
	e.expiry = d.clock.Now().Add(d.limits.visibility(dur))
	d.expiries.fix(e.index)
	return nil
}

// Nack gives the live lease up: the record is ready again, first in line.
func (d *Due) Nack(offset, nonce uint64) error {
	return d.giveBack(offset, nonce, false)
}

// Release undoes a lease whose read failed or did not fit: ready again
// and the delivery not counted.
func (d *Due) Release(offset, nonce uint64) error {
	return d.giveBack(offset, nonce, true)
}

func (d *Due) giveBack(offset, nonce uint64, uncount bool) error {
	d.mu.Lock()
	defer d.unlock()
	d.purge()
	e, err := d.live(offset, nonce)
	if err != nil {
		return err
	}
	d.expiries.remove(e)
	delete(d.leases, offset)
	if uncount {
		d.counts[offset]--
		d.countsVersion++
		d.ready = append([]uint64{offset}, d.ready...)
		return nil
	}
	d.lapse(offset, ReasonNacked)
	return nil
}

// Drop forgets offset whatever its state (its record is gone: below
// retention, unreadable, purged) and returns the due time its schedule
// entry was filed under; ok is false when it was not held.
func (d *Due) Drop(offset uint64) (due int64, ok bool) {
	d.mu.Lock()
	defer d.unlock()
	due, ok = d.due[offset]
	if !ok {
		return 0, false
	}
	if e := d.leases[offset]; e != nil {
		d.forget(e)
		return due, true
	}
	delete(d.due, offset)
	delete(d.counts, offset)
	d.countsVersion++
	if _, held := d.dead[offset]; held {
		delete(d.dead, offset)
		return due, true
	}
	for i, x := range d.ready {
		if x == offset {
			d.ready = append(d.ready[:i], d.ready[i+1:]...)
			break
		}
	}
	return due, true
}

// Expire purges lapsed leases and returns how many lapsed since the last
// call, for the caller to wake consumers.
func (d *Due) Expire() int {
	d.mu.Lock()
	defer d.unlock()
	d.purge()
	n := d.unreportedExpired
	d.unreportedExpired = 0
	return n
}

// forget removes a leased offset entirely.
func (d *Due) forget(e *entry) {
	d.expiries.remove(e)
	delete(d.leases, e.offset)
	delete(d.due, e.offset)
	delete(d.counts, e.offset)
	d.countsVersion++
}

func (d *Due) live(offset, nonce uint64) (*entry, error) {
	if e := d.leases[offset]; e != nil && e.nonce == nonce {
		return e, nil
	}
	return nil, ErrGone
}

// purge returns lapsed leases to the front of the ready queue (or holds
// them for the dead-letter topic: lapse).
func (d *Due) purge() {
	now := d.clock.Now()
	for {
		e := d.expiries.peek()
		if e == nil || now.Before(e.expiry) {
			return
		}
		x := e.offset
		d.expiries.remove(e)
		delete(d.leases, x)
		d.lapse(x, ReasonExpired)
		d.unreportedExpired++
	}
}

// lapse makes x, just unleased, ready again first in line, or holds it
// for the dead-letter topic when its deliveries are used up.
func (d *Due) lapse(x uint64, why Reason) {
	if d.limits.MaxDeliveries > 0 && d.counts[x] >= d.limits.MaxDeliveries {
		d.dead[x] = &Dead{Offset: x, DeliveryCount: d.counts[x], Reason: why}
		return
	}
	d.ready = append([]uint64{x}, d.ready...)
}

// Offsets lists the offsets held, ready or leased.
func (d *Due) Offsets() []uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]uint64, 0, len(d.due))
	for x := range d.due {
		out = append(out, x)
	}
	return out
}
