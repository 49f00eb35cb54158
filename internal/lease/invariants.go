package lease

import "fmt"

// unlock releases the table's mutex. In race builds (assertInvariants) it
// first checks the structural invariants of doc.go and panics on the first
// broken one, so every test run with -race checks them after every
// mutating operation, at the operation that broke them. In other builds the
// constant is false and the check compiles away.
func (t *Table) unlock() {
	if assertInvariants {
		if err := t.checkLocked(); err != nil {
			t.mu.Unlock()
			panic(fmt.Sprintf("lease: partition %d: invariant broken: %v", t.partition, err))
		}
	}
	t.mu.Unlock()
}

// checkLocked reports the first structural invariant of doc.go that t does
// not hold, or nil. The caller holds t.mu. It is O(leases + acked-ahead +
// skipped ranges + free list), plus up to freeScanMax offsets for
// invariant 8: fine in a race build, too slow for production.
func (t *Table) checkLocked() error {
	for off, e := range t.leases {
		if off < t.frontier {
			return fmt.Errorf("lease at %d below frontier %d", off, t.frontier)
		}
		if e.offset != off || e.index < 0 || e.index >= len(t.expiries) || t.expiries[e.index] != e {
			return fmt.Errorf("lease %d not consistently in the heap", off)
		}
		if _, ok := t.ackedAhead[off]; ok {
			return fmt.Errorf("offset %d both leased and acked-ahead", off)
		}
		if t.skipped.contains(off) {
			return fmt.Errorf("offset %d both leased and skipped", off)
		}
		if t.deliveries[off] < 1 {
			return fmt.Errorf("leased offset %d has delivery count %d", off, t.deliveries[off])
		}
	}
	for i := 1; i < len(t.expiries); i++ {
		if t.expiries.less(i, (i-1)/2) {
			return fmt.Errorf("expiry heap order broken at %d", i)
		}
	}
	if len(t.expiries) != len(t.leases) {
		return fmt.Errorf("heap holds %d entries for %d leases", len(t.expiries), len(t.leases))
	}
	for off := range t.ackedAhead {
		if off <= t.frontier {
			return fmt.Errorf("acked-ahead %d not above frontier %d", off, t.frontier)
		}
		if t.skipped.contains(off) {
			return fmt.Errorf("offset %d both acked-ahead and skipped", off)
		}
		if _, ok := t.deliveries[off]; ok {
			return fmt.Errorf("settled offset %d keeps a delivery count", off)
		}
	}
	for i, sp := range t.skipped.spans {
		if sp.lo <= t.frontier || sp.lo >= sp.hi {
			return fmt.Errorf("bad skipped span %v with frontier %d", sp, t.frontier)
		}
		if i > 0 && t.skipped.spans[i-1].hi >= sp.lo {
			return fmt.Errorf("skipped spans not disjoint and non-adjacent: %v", t.skipped.spans)
		}
	}
	for off := range t.deliveries {
		if off < t.frontier {
			return fmt.Errorf("delivery count kept below frontier at %d", off)
		}
	}
	seen := make(map[uint64]bool, len(t.free))
	for _, x := range t.free {
		if seen[x] {
			return fmt.Errorf("free list holds %d twice", x)
		}
		seen[x] = true
		if x >= t.cursor {
			return fmt.Errorf("free list holds %d at or above cursor %d", x, t.cursor)
		}
		if _, ok := t.leases[x]; ok {
			return fmt.Errorf("free list holds leased offset %d", x)
		}
	}
	for off := range t.dead {
		switch {
		case off < t.frontier || off >= t.cursor:
			return fmt.Errorf("dead-letter offset %d outside [frontier %d, cursor %d)", off, t.frontier, t.cursor)
		case t.leases[off] != nil:
			return fmt.Errorf("offset %d both leased and held for the dead-letter topic", off)
		case t.settled(off):
			return fmt.Errorf("offset %d both settled and held for the dead-letter topic", off)
		case seen[off]:
			return fmt.Errorf("free list holds dead-letter offset %d", off)
		case t.deliveries[off] < 1:
			return fmt.Errorf("dead-letter offset %d has delivery count %d", off, t.deliveries[off])
		}
	}
	if err := t.checkGroups(); err != nil {
		return err
	}
	if t.cursor < t.frontier {
		return fmt.Errorf("cursor %d below frontier %d", t.cursor, t.frontier)
	}
	// Invariant 8: below the cursor, everything unsettled and unleased is
	// in the free list. Bounded, so a table with a long run below the
	// cursor does not make every operation of a race build linear in it.
	for x := t.frontier; x < t.cursor && x < t.frontier+freeScanMax; x++ {
		if t.isFree(x) && !seen[x] {
			return fmt.Errorf("offset %d free below cursor %d but not in the free list", x, t.cursor)
		}
	}
	return nil
}

// freeScanMax bounds the offsets checkLocked walks for invariant 8.
const freeScanMax = 10_000
