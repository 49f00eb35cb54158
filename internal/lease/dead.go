package lease

import (
	"cmp"
	"slices"
	"time"
)

// Dead-letter hand-off (docs/concepts.md, "Dead letters").
//
// With Limits.MaxDeliveries > 0, a lease whose record has been delivered
// MaxDeliveries times and that expires or is nacked does not make its
// offset free again: the offset is held as dead. A held offset is neither
// deliverable nor settled. The caller (the broker's dead-letter pass)
// takes the held offsets (DueDead), commits each record to the dead-letter
// topic, and only then settles it here (SettleDead): commit before settle,
// so a crash between the two duplicates a dead-lettered record and never
// loses it. A commit that fails leaves the offset held, to be tried again
// after a backoff the caller chooses (DeferDead); nothing else about the
// partition waits for it.
//
// A held offset counts against the ack room like a lease above the
// frontier (it will be settled, joining acked-ahead), so the held set is
// bounded by MaxAckedAhead + 1, and settling it is never refused.

// Reason says why a record was dead-lettered (the narad-dlq-reason header).
type Reason string

const (
	ReasonExpired Reason = "expired" // its last lease lapsed
	ReasonNacked  Reason = "nacked"  // its last lease was given up
)

// Dead is an offset held for the dead-letter topic.
type Dead struct {
	Offset        uint64
	DeliveryCount int // deliveries when it was held: at least MaxDeliveries
	Reason        Reason
	// Attempts counts commits to the dead-letter topic that failed;
	// NotBefore is when the next may be made (zero: at once).
	Attempts  int
	NotBefore time.Time
}

// exhausted reports whether x has used up its deliveries: the next lapse
// (or, for a count carried over from an earlier life of the partition,
// the next grant) holds it for the dead-letter topic instead.
func (t *Table) exhausted(x uint64) bool {
	return t.limits.MaxDeliveries > 0 && t.deliveries[x] >= t.limits.MaxDeliveries
}

// lapse makes x (just unleased, unsettled) deliverable again, or holds it
// for the dead-letter topic when its deliveries are used up.
func (t *Table) lapse(x uint64, why Reason) {
	if t.exhausted(x) {
		t.hold(x, why)
		return
	}
	t.markFree(x)
}

// hold records x as dead. x is unsettled, not leased and not in the free
// list (or about to leave it).
func (t *Table) hold(x uint64, why Reason) {
	if t.dead == nil {
		t.dead = make(map[uint64]*Dead)
	}
	t.dead[x] = &Dead{Offset: x, DeliveryCount: t.deliveries[x], Reason: why}
	t.groupHeld(x)
}

// isDead reports whether x is held for the dead-letter topic.
func (t *Table) isDead(x uint64) bool {
	_, ok := t.dead[x]
	return ok
}

// deadAboveFrontier counts held offsets other than the frontier's.
func (t *Table) deadAboveFrontier() int {
	if t.isDead(t.frontier) {
		return len(t.dead) - 1
	}
	return len(t.dead)
}

// DueDead returns up to n held offsets whose next attempt is due now,
// lowest offset first. They stay held until SettleDead (or ReviveDead).
func (t *Table) DueDead(n int) []Dead {
	t.mu.Lock()
	defer t.unlock()
	now := t.clock.Now()
	t.purge(now)
	return dueHolds(t.dead, now, n)
}

// dueHolds returns up to n of the holds whose next attempt is due at now,
// lowest offset first: DueDead of the Table and of the due table alike.
func dueHolds(dead map[uint64]*Dead, now time.Time, n int) []Dead {
	var out []Dead
	for _, d := range dead {
		if !now.Before(d.NotBefore) {
			out = append(out, *d)
		}
	}
	slices.SortFunc(out, func(a, b Dead) int { return cmp.Compare(a.Offset, b.Offset) })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// DeferDead records a failed commit of held offset x: its next attempt is
// due at until. It returns false if x is not held (any more).
func (t *Table) DeferDead(x uint64, until time.Time) bool {
	t.mu.Lock()
	defer t.unlock()
	d, ok := t.dead[x]
	if ok {
		d.Attempts++
		d.NotBefore = until
	}
	return ok
}

// SettleDead settles held offset x once its record is committed to the
// dead-letter topic. It is never refused for room (the hold took its
// room); it returns ErrSettled if x was settled meanwhile (retention or
// a skipped range passed over it) and ErrGone if x is not held.
func (t *Table) SettleDead(x uint64) error {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	if !t.isDead(x) {
		if t.settled(x) {
			return ErrSettled
		}
		return ErrGone
	}
	delete(t.dead, x)
	t.settle(x)
	return nil
}

// ReviveDead makes every held offset deliverable again (the topic's
// dead-letter policy was turned off before they were committed there) and
// returns how many there were. Their delivery counts are kept.
func (t *Table) ReviveDead() int {
	t.mu.Lock()
	defer t.unlock()
	n := len(t.dead)
	for x := range t.dead {
		delete(t.dead, x)
		t.markFree(x)
	}
	return n
}

// DeadCount returns how many offsets are held for the dead-letter topic.
func (t *Table) DeadCount() int {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	return len(t.dead)
}

// dropDeadRange forgets held offsets in [lo, hi): they are being settled
// wholesale (retention, skipped ranges). The map is at most MaxAckedAhead
// + 1 entries, so walking it is cheap.
func (t *Table) dropDeadRange(lo, hi uint64) {
	for x := range t.dead {
		if x >= lo && x < hi {
			delete(t.dead, x)
		}
	}
}
