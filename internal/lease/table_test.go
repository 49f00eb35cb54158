package lease

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

func TestReserveOrder(t *testing.T) {
	tests := []struct {
		name     string
		frontier uint64
		setup    func(t *testing.T, tb *Table)
		hwm      uint64
		want     int
		expect   []uint64
	}{
		{name: "fresh table, lowest first", hwm: 5, want: 3, expect: []uint64{0, 1, 2}},
		{name: "stops at hwm", hwm: 2, want: 5, expect: []uint64{0, 1}},
		{name: "hwm at frontier", hwm: 0, want: 5, expect: nil},
		{name: "want zero", hwm: 5, want: 0, expect: nil},
		{name: "want negative", hwm: 5, want: -1, expect: nil},
		{name: "starts at persisted frontier", frontier: 10, hwm: 13, want: 5, expect: []uint64{10, 11, 12}},
		{
			name: "skips leased", hwm: 10, want: 3, expect: []uint64{3, 4, 5},
			setup: func(t *testing.T, tb *Table) { tb.Reserve(10, 3) },
		},
		{
			name: "skips acked-ahead", hwm: 10, want: 3, expect: []uint64{1, 4, 5},
			setup: func(t *testing.T, tb *Table) {
				m := byOffset(tb.Reserve(10, 4)) // 0..3
				mustNil(t, "ack 2", tb.Ack(2, m[2].Nonce))
				mustNil(t, "ack 3", tb.Ack(3, m[3].Nonce))
				mustNil(t, "nack 1", tb.Nack(1, m[1].Nonce))
			},
		},
		{
			name: "skips skipped ranges", hwm: 10, want: 4, expect: []uint64{0, 1, 4, 7},
			setup: func(t *testing.T, tb *Table) {
				tb.MarkSkipped(2, 4)
				tb.MarkSkipped(5, 7)
			},
		},
		{
			name: "freed offsets below the cursor come first, in order", hwm: 10, want: 3, expect: []uint64{1, 3, 5},
			setup: func(t *testing.T, tb *Table) {
				m := byOffset(tb.Reserve(10, 5)) // 0..4
				mustNil(t, "nack 3", tb.Nack(3, m[3].Nonce))
				mustNil(t, "nack 1", tb.Nack(1, m[1].Nonce))
			},
		},
		{
			name: "freed offset at or above a lowered hwm is held back", hwm: 2, want: 3, expect: []uint64{1},
			setup: func(t *testing.T, tb *Table) {
				m := byOffset(tb.Reserve(10, 5))
				mustNil(t, "nack 3", tb.Nack(3, m[3].Nonce))
				mustNil(t, "nack 1", tb.Nack(1, m[1].Nonce))
			},
		},
		{
			name: "frontier moved past freed offsets", hwm: 10, want: 2, expect: []uint64{5, 6},
			setup: func(t *testing.T, tb *Table) {
				m := byOffset(tb.Reserve(10, 5))
				mustNil(t, "nack 2", tb.Nack(2, m[2].Nonce))
				tb.AdvanceTo(5)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Time{})
			tb := New(1, tc.frontier, defaultLimits, clk)
			if tc.setup != nil {
				tc.setup(t, tb)
			}
			got := tb.Reserve(tc.hwm, tc.want)
			if !slices.Equal(offsets(got), tc.expect) {
				t.Fatalf("Reserve(%d, %d) = %v, want %v", tc.hwm, tc.want, offsets(got), tc.expect)
			}
			for _, l := range got {
				if l.Partition != 1 {
					t.Errorf("lease %d: partition %d, want 1", l.Offset, l.Partition)
				}
				if want := clk.Now().Add(vt); !l.Expiry.Equal(want) {
					t.Errorf("lease %d: expiry %v, want %v", l.Offset, l.Expiry, want)
				}
			}
		})
	}
}

func TestReserveNeverDoubleLeases(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	seen := map[uint64]bool{}
	for i := 0; i < 10; i++ {
		for _, l := range tb.Reserve(50, 7) {
			if seen[l.Offset] {
				t.Fatalf("offset %d leased twice while live", l.Offset)
			}
			seen[l.Offset] = true
		}
	}
	if len(seen) != 50 {
		t.Fatalf("leased %d distinct offsets, want 50", len(seen))
	}
}

func TestInFlightCap(t *testing.T) {
	l := defaultLimits
	l.MaxInFlight = 3
	tests := []struct {
		name     string
		free     func(tb *Table, clk *clock.Fake, ls []Lease) error
		freesOne bool
	}{
		{"ack", func(tb *Table, _ *clock.Fake, ls []Lease) error { return tb.Ack(ls[0].Offset, ls[0].Nonce) }, true},
		{"ack above gap", func(tb *Table, _ *clock.Fake, ls []Lease) error { return tb.Ack(ls[2].Offset, ls[2].Nonce) }, true},
		{"nack", func(tb *Table, _ *clock.Fake, ls []Lease) error { return tb.Nack(ls[1].Offset, ls[1].Nonce) }, true},
		{"release", func(tb *Table, _ *clock.Fake, ls []Lease) error { return tb.Release(ls[1].Offset, ls[1].Nonce) }, true},
		{"expiry", func(_ *Table, clk *clock.Fake, _ []Lease) error { clk.Advance(vt); return nil }, true},
		{"extend does not free", func(tb *Table, _ *clock.Fake, ls []Lease) error { return tb.Extend(ls[0].Offset, ls[0].Nonce, 0) }, false},
		{"stale ack does not free", func(tb *Table, _ *clock.Fake, ls []Lease) error {
			if err := tb.Ack(ls[0].Offset, ls[0].Nonce+100); !errors.Is(err, ErrGone) {
				return err
			}
			return nil
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb, clk := newTable(t, l)
			ls := tb.Reserve(100, 10)
			if len(ls) != 3 {
				t.Fatalf("first Reserve got %d leases, want the cap 3", len(ls))
			}
			if more := tb.Reserve(100, 10); len(more) != 0 {
				t.Fatalf("Reserve at the cap got %v, want none", offsets(more))
			}
			mustNil(t, "free", tc.free(tb, clk, ls))
			got := len(tb.Reserve(100, 10))
			switch {
			case tc.freesOne && tc.name == "expiry" && got != 3:
				t.Fatalf("after all expired, Reserve got %d, want 3", got)
			case tc.freesOne && tc.name != "expiry" && got != 1:
				t.Fatalf("after one slot freed, Reserve got %d, want 1", got)
			case !tc.freesOne && got != 0:
				t.Fatalf("no slot freed, yet Reserve got %d", got)
			}
			if s := tb.Stats(); s.InFlight != 3 {
				t.Fatalf("InFlight = %d, want 3", s.InFlight)
			}
		})
	}
}

func TestExpiryExactlyAtVisibilityTimeout(t *testing.T) {
	for _, timeout := range []time.Duration{time.Millisecond, vt, 12 * time.Hour} {
		t.Run(timeout.String(), func(t *testing.T) {
			l := defaultLimits
			l.VisibilityTimeout = timeout
			tb, clk := newTable(t, l)
			t0 := clk.Now()
			first := reserveOne(t, tb, 1)
			if at, ok := tb.NextExpiry(); !ok || !at.Equal(t0.Add(timeout)) {
				t.Fatalf("NextExpiry = %v, %v; want %v", at, ok, t0.Add(timeout))
			}

			clk.Set(t0.Add(timeout - time.Nanosecond))
			if n := tb.Expire(); n != 0 {
				t.Fatalf("1ns before the timeout Expire() = %d, want 0", n)
			}
			if ls := tb.Reserve(1, 1); len(ls) != 0 {
				t.Fatalf("1ns before the timeout the record was redelivered: %v", offsets(ls))
			}
			mustNil(t, "extend 1ns before timeout proves it is live", tb.Extend(0, first.Nonce, 0))

			// Reset the lease to a fresh one so the boundary is exact again.
			mustNil(t, "nack", tb.Nack(0, first.Nonce))
			second := reserveOne(t, tb, 1)
			t1 := clk.Now()
			clk.Set(t1.Add(timeout))
			if n := tb.Expire(); n != 1 {
				t.Fatalf("at the timeout Expire() = %d, want 1", n)
			}
			if n := tb.Expire(); n != 0 {
				t.Fatalf("second Expire() = %d, want 0 (already reported)", n)
			}
			third := reserveOne(t, tb, 1)
			if third.Offset != 0 || third.Nonce == second.Nonce || third.DeliveryCount != 3 {
				t.Fatalf("redelivery = %+v, want offset 0, new nonce, delivery 3", third)
			}
			if _, ok := tb.NextExpiry(); !ok {
				t.Fatal("NextExpiry reports no lease while one is out")
			}
		})
	}
}

func TestExpireReportsLazyPurges(t *testing.T) {
	tb, clk := newTable(t, defaultLimits)
	ls := tb.Reserve(10, 3)
	clk.Advance(vt)
	// Ack purges the three expired leases as a side effect (and is refused).
	if err := tb.Ack(ls[0].Offset, ls[0].Nonce); !errors.Is(err, ErrGone) {
		t.Fatalf("Ack after expiry = %v, want ErrGone", err)
	}
	if n := tb.Expire(); n != 3 {
		t.Fatalf("Expire() = %d, want the 3 leases purged lazily by Ack", n)
	}
	if _, ok := tb.NextExpiry(); ok {
		t.Fatal("NextExpiry reports a lease, want none")
	}
	if s := tb.Stats(); s.Expired != 3 || s.InFlight != 0 {
		t.Fatalf("Stats = %+v, want Expired 3, InFlight 0", s)
	}
}

// TestStaleHandlesAreGone covers rule 8: every way a handle can go stale
// yields ErrGone, for each of Ack, Extend, Nack and Release, and the call
// changes nothing.
func TestStaleHandlesAreGone(t *testing.T) {
	type op struct {
		name string
		do   func(tb *Table, off, nonce uint64) error
	}
	ops := []op{
		{"ack", (*Table).Ack},
		{"extend", func(tb *Table, off, nonce uint64) error { return tb.Extend(off, nonce, 0) }},
		{"extend for 1h", func(tb *Table, off, nonce uint64) error { return tb.Extend(off, nonce, time.Hour) }},
		{"nack", (*Table).Nack},
		{"release", (*Table).Release},
	}
	// Each stale returns the (offset, nonce) of a handle that must be gone.
	// settled: the record is settled, so the error is ErrSettled (which is
	// ErrGone too); otherwise plain ErrGone.
	stales := []struct {
		name    string
		stale   func(t *testing.T, tb *Table, clk *clock.Fake) (uint64, uint64)
		settled bool
	}{
		{"late after expiry", func(t *testing.T, tb *Table, clk *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 10)
			clk.Advance(vt)
			return l.Offset, l.Nonce
		}, false},
		{"offset re-leased under a new nonce", func(t *testing.T, tb *Table, clk *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 1)
			clk.Advance(vt)
			again := reserveOne(t, tb, 1)
			if again.Offset != l.Offset || again.Nonce == l.Nonce {
				t.Fatalf("re-lease = %+v, want offset %d with a new nonce", again, l.Offset)
			}
			return l.Offset, l.Nonce
		}, false},
		{"after nack and re-lease", func(t *testing.T, tb *Table, _ *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 1)
			mustNil(t, "nack", tb.Nack(l.Offset, l.Nonce))
			reserveOne(t, tb, 1)
			return l.Offset, l.Nonce
		}, false},
		{"after nack", func(t *testing.T, tb *Table, _ *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 10)
			mustNil(t, "nack", tb.Nack(l.Offset, l.Nonce))
			return l.Offset, l.Nonce
		}, false},
		{"after release", func(t *testing.T, tb *Table, _ *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 10)
			mustNil(t, "release", tb.Release(l.Offset, l.Nonce))
			return l.Offset, l.Nonce
		}, false},
		{"already acked at frontier", func(t *testing.T, tb *Table, _ *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 10)
			mustNil(t, "ack", tb.Ack(l.Offset, l.Nonce))
			return l.Offset, l.Nonce
		}, true},
		{"already acked ahead", func(t *testing.T, tb *Table, _ *clock.Fake) (uint64, uint64) {
			ls := tb.Reserve(10, 3)
			mustNil(t, "ack", tb.Ack(ls[2].Offset, ls[2].Nonce))
			return ls[2].Offset, ls[2].Nonce
		}, true},
		{"wrong nonce", func(t *testing.T, tb *Table, _ *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 10)
			return l.Offset, l.Nonce + 1
		}, false},
		{"never leased", func(t *testing.T, tb *Table, _ *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 10)
			return l.Offset + 5, l.Nonce
		}, false},
		{"dropped by skip", func(t *testing.T, tb *Table, _ *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 10)
			tb.MarkSkipped(l.Offset, l.Offset+1)
			return l.Offset, l.Nonce
		}, true},
		{"dropped by retention", func(t *testing.T, tb *Table, _ *clock.Fake) (uint64, uint64) {
			l := reserveOne(t, tb, 10)
			tb.AdvanceTo(l.Offset + 1)
			return l.Offset, l.Nonce
		}, true},
	}
	for _, st := range stales {
		for _, o := range ops {
			t.Run(st.name+"/"+o.name, func(t *testing.T) {
				tb, clk := newTable(t, defaultLimits)
				off, nonce := st.stale(t, tb, clk)
				before := tb.Stats()
				want := ErrGone
				if st.settled {
					want = ErrSettled
				}
				if err := o.do(tb, off, nonce); err != want || !errors.Is(err, ErrGone) {
					t.Fatalf("%s of stale handle = %v, want %v", o.name, err, want)
				}
				after := tb.Stats()
				before.Expired, after.Expired = 0, 0 // a purge may run on the call
				before.InFlight, after.InFlight = 0, 0
				if before != after {
					t.Fatalf("stale %s changed state:\n before %+v\n after  %+v", o.name, before, after)
				}
			})
		}
	}
}

func TestExtendOutlivesOriginalExpiry(t *testing.T) {
	tb, clk := newTable(t, defaultLimits)
	t0 := clk.Now()
	l := reserveOne(t, tb, 1)
	clk.Advance(vt / 2)
	mustNil(t, "extend", tb.Extend(l.Offset, l.Nonce, 0))
	newExpiry := t0.Add(vt / 2).Add(vt)
	if at, _ := tb.NextExpiry(); !at.Equal(newExpiry) {
		t.Fatalf("NextExpiry after extend = %v, want %v", at, newExpiry)
	}
	if n := len(tb.expiries); n != 1 {
		t.Fatalf("expiry heap holds %d entries after extend, want 1 (no stale entry)", n)
	}

	clk.Set(t0.Add(vt)) // the original expiry
	if n := tb.Expire(); n != 0 {
		t.Fatalf("at the original expiry Expire() = %d, want 0", n)
	}
	if ls := tb.Reserve(1, 1); len(ls) != 0 {
		t.Fatalf("extended lease redelivered at its original expiry: %v", offsets(ls))
	}
	clk.Set(newExpiry.Add(-time.Nanosecond))
	mustNil(t, "ack just before the extended expiry", tb.Ack(l.Offset, l.Nonce))
	if tb.Frontier() != 1 {
		t.Fatalf("frontier = %d, want 1", tb.Frontier())
	}
}

func TestExtendedLeaseExpiresAtNewExpiry(t *testing.T) {
	tb, clk := newTable(t, defaultLimits)
	l := reserveOne(t, tb, 1)
	clk.Advance(10 * time.Second)
	mustNil(t, "extend", tb.Extend(l.Offset, l.Nonce, 0))
	clk.Advance(vt)
	if n := tb.Expire(); n != 1 {
		t.Fatalf("Expire() at the extended expiry = %d, want 1", n)
	}
	if err := tb.Ack(l.Offset, l.Nonce); !errors.Is(err, ErrGone) {
		t.Fatalf("Ack after the extended expiry = %v, want ErrGone", err)
	}
}

func TestNackMakesRecordAvailableAtOnce(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	ls := tb.Reserve(3, 3)
	if got := tb.Reserve(3, 3); len(got) != 0 {
		t.Fatalf("all leased, Reserve got %v", offsets(got))
	}
	mustNil(t, "nack", tb.Nack(ls[1].Offset, ls[1].Nonce))
	// No clock movement: the record must be available right now.
	got := tb.Reserve(3, 3)
	if len(got) != 1 || got[0].Offset != 1 {
		t.Fatalf("after nack Reserve = %v, want [1]", offsets(got))
	}
	if got[0].DeliveryCount != 2 {
		t.Fatalf("delivery count after nack = %d, want 2", got[0].DeliveryCount)
	}
	for _, l := range ls {
		if got[0].Nonce == l.Nonce {
			t.Fatalf("redelivery nonce %d repeats an earlier one", got[0].Nonce)
		}
	}
}

func TestReleaseDoesNotCountDelivery(t *testing.T) {
	tests := []struct {
		name    string
		undo    func(tb *Table, l Lease) error
		wantDC2 int
	}{
		{"release", func(tb *Table, l Lease) error { return tb.Release(l.Offset, l.Nonce) }, 1},
		{"nack", func(tb *Table, l Lease) error { return tb.Nack(l.Offset, l.Nonce) }, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb, _ := newTable(t, defaultLimits)
			l := reserveOne(t, tb, 1)
			mustNil(t, tc.name, tc.undo(tb, l))
			again := reserveOne(t, tb, 1)
			if again.Offset != l.Offset || again.DeliveryCount != tc.wantDC2 {
				t.Fatalf("after %s: %+v, want offset %d delivery %d", tc.name, again, l.Offset, tc.wantDC2)
			}
		})
	}
}

func TestDeliveryCount(t *testing.T) {
	tb, clk := newTable(t, defaultLimits)
	var last Lease
	for want := 1; want <= 4; want++ {
		last = reserveOne(t, tb, 1)
		if last.DeliveryCount != want {
			t.Fatalf("delivery %d reported count %d", want, last.DeliveryCount)
		}
		switch want {
		case 1, 3:
			mustNil(t, "nack", tb.Nack(last.Offset, last.Nonce))
		case 2:
			clk.Advance(vt) // expiry counts like a nack
		}
	}
	mustNil(t, "ack", tb.Ack(last.Offset, last.Nonce))
	if len(tb.deliveries) != 0 {
		t.Fatalf("delivery counts kept after settle: %v", tb.deliveries)
	}
	// A different, fresh offset starts at 1 again.
	if l := reserveOne(t, tb, 2); l.Offset != 1 || l.DeliveryCount != 1 {
		t.Fatalf("fresh offset: %+v", l)
	}
}

// Nonces are random: not a counter, not the clock. Two tables on the same
// fake clock (the same instant, as a restart within a tick would be) issue
// unrelated nonces, no nonce repeats, and successive nonces are not a
// sequence one could extrapolate from a handle seen.
func TestNoncesAreRandomAndUnique(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	seen := map[uint64]bool{}
	var first [2][]uint64
	for i := range first {
		tb := New(0, 0, defaultLimits, clk)
		for range 5 {
			for _, l := range tb.Reserve(1000, 10) {
				if seen[l.Nonce] {
					t.Fatalf("nonce %d issued twice", l.Nonce)
				}
				seen[l.Nonce] = true
				first[i] = append(first[i], l.Nonce)
				mustNil(t, "nack", tb.Nack(l.Offset, l.Nonce))
			}
		}
	}
	steps := map[uint64]bool{}
	highBits := 0
	for i := 1; i < len(first[0]); i++ {
		steps[first[0][i]-first[0][i-1]] = true
	}
	for _, n := range first[0] {
		if n >= 1<<63 {
			highBits++
		}
	}
	// A counter (or a clock) has one step; 49 random steps all differ but
	// for 2^-50-ish odds. Random 64-bit nonces have the top bit set about
	// half of the time: all 50 clear (a small counter) or all set is a
	// 2^-49 event.
	if len(steps) < len(first[0])-2 {
		t.Fatalf("nonces step by %d distinct amounts in %d steps: a sequence, not random", len(steps), len(first[0])-1)
	}
	if highBits == 0 || highBits == len(first[0]) {
		t.Fatalf("top bit set in %d of %d nonces: not 64 random bits", highBits, len(first[0]))
	}
	if clock.Epoch.UnixNano() <= int64(first[0][0]) && int64(first[0][0]) < clock.Epoch.UnixNano()+1000 {
		t.Fatalf("first nonce %d is the clock's reading", first[0][0])
	}
}

func TestNewDefaultsToRealClock(t *testing.T) {
	tb := New(0, 0, defaultLimits, nil)
	l := reserveOne(t, tb, 1)
	if d := time.Until(l.Expiry); d <= 0 || d > vt {
		t.Fatalf("expiry %v is not within one visibility timeout of now", l.Expiry)
	}
}
