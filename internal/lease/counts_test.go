package lease

import (
	"errors"
	"slices"
	"testing"
)

func TestDeliveryCountReadsTheCount(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	if n := tb.DeliveryCount(0); n != 0 {
		t.Fatalf("never delivered: %d", n)
	}
	l := reserveOne(t, tb, 5)
	mustNil(t, "nack", tb.Nack(l.Offset, l.Nonce))
	l = reserveOne(t, tb, 5)
	if n := tb.DeliveryCount(0); n != 2 || l.DeliveryCount != 2 {
		t.Fatalf("count %d, lease says %d; want 2", n, l.DeliveryCount)
	}
	mustNil(t, "ack", tb.Ack(l.Offset, l.Nonce))
	if n := tb.DeliveryCount(0); n != 0 {
		t.Fatalf("settled offset keeps count %d", n)
	}
}

func TestSeededCountsContinue(t *testing.T) {
	tb := New(0, 10, defaultLimits, nil)
	took := tb.SeedDeliveries([]DeliveryCount{{Offset: 3, Count: 9}, {Offset: 10, Count: 3}, {Offset: 12, Count: 1}, {Offset: 13, Count: 0}})
	if took != 2 {
		t.Fatalf("took %d seeds, want 2 (below the frontier and a zero count ignored)", took)
	}
	ls := byOffset(tb.Reserve(20, 4))
	for off, want := range map[uint64]int{10: 4, 11: 1, 12: 2, 13: 1} {
		if got := ls[off].DeliveryCount; got != want {
			t.Fatalf("offset %d: delivery_count %d, want %d", off, got, want)
		}
	}
	checkInternal(t, tb)
}

func TestDeliveriesSnapshotAndVersion(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	_, v0 := tb.Deliveries(0)
	m := byOffset(tb.Reserve(10, 4)) // 0..3, each count 1
	for range 2 {
		mustNil(t, "nack 2", tb.Nack(2, m[2].Nonce))
		m[2] = reserveOne(t, tb, 10)
	}
	mustNil(t, "nack 1", tb.Nack(1, m[1].Nonce))
	m[1] = reserveOne(t, tb, 10)
	got, v1 := tb.Deliveries(0)
	want := []DeliveryCount{{0, 1}, {1, 2}, {2, 3}, {3, 1}}
	if !slices.Equal(got, want) || v1 == v0 {
		t.Fatalf("Deliveries = %v (version %d→%d), want %v and a new version", got, v0, v1, want)
	}
	// Bounded: the highest counts stay, ties go to the lowest offsets.
	if got, _ := tb.Deliveries(3); !slices.Equal(got, []DeliveryCount{{0, 1}, {1, 2}, {2, 3}}) {
		t.Fatalf("Deliveries(3) = %v", got)
	}
	if got, _ := tb.Deliveries(1); !slices.Equal(got, []DeliveryCount{{2, 3}}) {
		t.Fatalf("Deliveries(1) = %v", got)
	}
	if tb.CountsVersion() != v1 {
		t.Fatal("a snapshot moved the version")
	}
	mustNil(t, "ack 0", tb.Ack(0, m[0].Nonce))
	if _, v2 := tb.Deliveries(0); v2 == v1 {
		t.Fatal("an ack dropped a count without a new version")
	}
}

func TestPurgeToSettlesBelowTheMark(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	m := byOffset(tb.Reserve(10, 4)) // 0..3 leased
	mustNil(t, "ack 2", tb.Ack(2, m[2].Nonce))
	mustNil(t, "nack 1", tb.Nack(1, m[1].Nonce))
	tb.MarkSkipped(5, 6)
	// 0..9 below the mark: 2 acked ahead and 5 skipped were settled.
	if n := tb.PurgeTo(10); n != 8 {
		t.Fatalf("purged %d, want 8", n)
	}
	if f := tb.Frontier(); f != 10 {
		t.Fatalf("frontier %d, want 10", f)
	}
	for _, off := range []uint64{0, 3} {
		if err := tb.Ack(off, m[off].Nonce); !errors.Is(err, ErrSettled) {
			t.Fatalf("ack of a purged lease at %d: %v, want ErrSettled", off, err)
		}
		if err := tb.Extend(off, m[off].Nonce, 0); !errors.Is(err, ErrGone) {
			t.Fatalf("extend of a purged lease at %d: %v", off, err)
		}
	}
	if got, _ := tb.Deliveries(0); len(got) != 0 {
		t.Fatalf("purged records keep counts: %v", got)
	}
	if n := tb.PurgeTo(10); n != 0 {
		t.Fatalf("second purge settled %d, want 0", n)
	}
	if ls := tb.Reserve(10, 5); len(ls) != 0 {
		t.Fatalf("purged records offered again: %v", offsets(ls))
	}
	if ls := tb.Reserve(12, 5); !slices.Equal(offsets(ls), []uint64{10, 11}) {
		t.Fatalf("records above the mark: %v", offsets(ls))
	}
	if st := tb.Stats(); st.RetentionDropped != 0 {
		t.Fatalf("a purge counted as retention: %+v", st)
	}
	checkInternal(t, tb)
}

// BenchmarkDeliveriesSnapshot: what the broker's counts sweep pays under
// the table's mutex and after it, per write, with 4,096 leases out.
func BenchmarkDeliveriesSnapshot(b *testing.B) {
	tb := New(0, 0, Limits{VisibilityTimeout: vt, MaxInFlight: 4096, MaxAckedAhead: 4096}, nil)
	tb.Reserve(1<<20, 4096)
	b.ReportAllocs()
	for b.Loop() {
		tb.Deliveries(0)
	}
}
