package lease

import "testing"

// TestStateStaysBounded churns a table for a long time with every kind of
// settle and asserts that its memory (maps, heap, free list, recycled
// entries) stays bounded by the limits, not by the offsets processed.
func TestStateStaysBounded(t *testing.T) {
	const cap = 8
	tb, clk := newTable(t, Limits{VisibilityTimeout: vt, MaxInFlight: cap, MaxAckedAhead: 4})
	var hwm uint64
	for i := 0; i < 20_000; i++ {
		hwm += 2
		for j, l := range tb.Reserve(hwm, cap) {
			switch (i + j) % 4 {
			case 0:
				_ = tb.Nack(l.Offset, l.Nonce)
			case 1:
				_ = tb.Release(l.Offset, l.Nonce)
			case 2:
				// left to expire
			default:
				_ = tb.Ack(l.Offset, l.Nonce) // may be refused when full
			}
		}
		if i%7 == 0 {
			clk.Advance(vt)
		}
		if i%1000 == 999 {
			tb.MarkSkipped(hwm-3, hwm-1)
		}
		tb.mu.Lock()
		sizes := []int{len(tb.leases), len(tb.expiries), len(tb.deliveries), len(tb.free), len(tb.ackedAhead), tb.skipped.len(), len(tb.spare)}
		tb.mu.Unlock()
		for k, n := range sizes {
			if n > 4*cap {
				t.Fatalf("iteration %d: structure %d holds %d items (sizes %v), want O(limits)", i, k, n, sizes)
			}
		}
	}
	checkInternal(t, tb)
	// And nothing got stuck: once the consumers are gone, an in-order
	// consumer drains the partition.
	clk.Advance(vt)
	for rounds := 0; tb.Frontier() < hwm; rounds++ {
		if rounds > int(hwm) {
			t.Fatalf("drain stuck at frontier %d, hwm %d: %+v", tb.Frontier(), hwm, tb.Stats())
		}
		for _, l := range tb.Reserve(hwm, cap) {
			mustNil(t, "drain ack", tb.Ack(l.Offset, l.Nonce))
		}
	}
}
