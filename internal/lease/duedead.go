package lease

import (
	"time"
)

// The due table's dead-letter hand-off: the Table's (dead.go), for
// scheduled records delivered after they fell due. The holds count
// against no cap (the due table has no acked-ahead set), so TakeFreed of
// the caller's hand-off loop has nothing to report here.

// DueDead returns up to n held offsets whose next attempt is due now,
// lowest offset first. They stay held until SettleDead (or ReviveDead).
func (d *Due) DueDead(n int) []Dead {
	d.mu.Lock()
	defer d.unlock()
	d.purge()
	return dueHolds(d.dead, d.clock.Now(), n)
}

// DeferDead records a failed commit of held offset x: its next attempt
// is due at until. It returns false if x is not held (any more).
func (d *Due) DeferDead(x uint64, until time.Time) bool {
	d.mu.Lock()
	defer d.unlock()
	h, ok := d.dead[x]
	if ok {
		h.Attempts++
		h.NotBefore = until
	}
	return ok
}

// SettleDead removes held offset x once its record is committed to the
// dead-letter topic, and returns the due time its schedule entry was
// filed under, for the caller's Settle. ErrGone if x is not held.
func (d *Due) SettleDead(x uint64) (due int64, err error) {
	d.mu.Lock()
	defer d.unlock()
	if _, ok := d.dead[x]; !ok {
		return 0, ErrGone
	}
	due = d.due[x]
	delete(d.dead, x)
	delete(d.due, x)
	delete(d.counts, x)
	d.countsVersion++
	return due, nil
}

// ReviveDead makes every held offset ready again (the topic's dead-letter
// policy was turned off) and returns how many there were.
func (d *Due) ReviveDead() int {
	d.mu.Lock()
	defer d.unlock()
	n := len(d.dead)
	for x := range d.dead {
		delete(d.dead, x)
		d.ready = append(d.ready, x)
	}
	return n
}

// DeadCount returns how many offsets are held for the dead-letter topic.
func (d *Due) DeadCount() int {
	d.mu.Lock()
	defer d.unlock()
	d.purge()
	return len(d.dead)
}

// TakeFreed is always false: settling a due table's hold frees no
// capacity a consumer waits for (the Table's TakeFreed, for the hand-off loop).
func (d *Due) TakeFreed() bool { return false }
