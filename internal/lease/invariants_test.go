package lease

// fataler is the part of testing.TB that *rapid.T also has.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkInternal asserts the structural invariants listed in doc.go.
func checkInternal(t fataler, tb *Table) {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for off, e := range tb.leases {
		if off < tb.frontier {
			t.Fatalf("lease at %d below frontier %d", off, tb.frontier)
		}
		if e.offset != off || e.index < 0 || e.index >= len(tb.expiries) || tb.expiries[e.index] != e {
			t.Fatalf("lease %d not consistently in the heap", off)
		}
		if _, ok := tb.ackedAhead[off]; ok {
			t.Fatalf("offset %d both leased and acked-ahead", off)
		}
		if tb.skipped.contains(off) {
			t.Fatalf("offset %d both leased and skipped", off)
		}
		if tb.deliveries[off] < 1 {
			t.Fatalf("leased offset %d has delivery count %d", off, tb.deliveries[off])
		}
	}
	for i := 1; i < len(tb.expiries); i++ {
		if tb.expiries.Less(i, (i-1)/2) {
			t.Fatalf("expiry heap order broken at %d", i)
		}
	}
	if len(tb.expiries) != len(tb.leases) {
		t.Fatalf("heap holds %d entries for %d leases", len(tb.expiries), len(tb.leases))
	}
	for off := range tb.ackedAhead {
		if off <= tb.frontier {
			t.Fatalf("acked-ahead %d not above frontier %d", off, tb.frontier)
		}
		if tb.skipped.contains(off) {
			t.Fatalf("offset %d both acked-ahead and skipped", off)
		}
		if _, ok := tb.deliveries[off]; ok {
			t.Fatalf("settled offset %d keeps a delivery count", off)
		}
	}
	for i, sp := range tb.skipped.spans {
		if sp.lo <= tb.frontier || sp.lo >= sp.hi {
			t.Fatalf("bad skipped span %v with frontier %d", sp, tb.frontier)
		}
		if i > 0 && tb.skipped.spans[i-1].hi >= sp.lo {
			t.Fatalf("skipped spans not disjoint and non-adjacent: %v", tb.skipped.spans)
		}
	}
	for off := range tb.deliveries {
		if off < tb.frontier {
			t.Fatalf("delivery count kept below frontier at %d", off)
		}
	}
	seen := map[uint64]bool{}
	for _, x := range tb.free {
		if seen[x] {
			t.Fatalf("free list holds %d twice", x)
		}
		seen[x] = true
		if x >= tb.cursor {
			t.Fatalf("free list holds %d at or above cursor %d", x, tb.cursor)
		}
		if _, ok := tb.leases[x]; ok {
			t.Fatalf("free list holds leased offset %d", x)
		}
	}
	if tb.cursor < tb.frontier {
		t.Fatalf("cursor %d below frontier %d", tb.cursor, tb.frontier)
	}
	// Invariant 8: below the cursor, everything unsettled and unleased is
	// in the free list.
	for x := tb.frontier; x < tb.cursor && x < tb.frontier+10_000; x++ {
		if tb.isFree(x) && !seen[x] {
			t.Fatalf("offset %d free below cursor %d but not in the free list", x, tb.cursor)
		}
	}
}
