package lease

import (
	"errors"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// extendCases: an extend for d lives d from the extend, shorter or longer
// than the table's timeout (vt, 30 s); d <= 0 is the table's timeout.
var extendCases = []struct {
	name string
	d    time.Duration
	life time.Duration // from the extend
}{
	{"5s on a 30s table", 5 * time.Second, 5 * time.Second},
	{"1h outlives the timeout", time.Hour, time.Hour},
	{"1ns", time.Nanosecond, time.Nanosecond},
	{"0 is the timeout", 0, vt},
	{"negative is the timeout", -time.Second, vt},
}

func TestExtendForADuration(t *testing.T) {
	for _, tc := range extendCases {
		t.Run(tc.name, func(t *testing.T) {
			tb, clk := newTable(t, defaultLimits)
			l := reserveOne(t, tb, 1)
			clk.Advance(time.Second)
			mustNil(t, "extend", tb.Extend(l.Offset, l.Nonce, tc.d))
			at := clk.Now().Add(tc.life)
			if got, ok := tb.NextExpiry(); !ok || !got.Equal(at) {
				t.Fatalf("NextExpiry after extend = %v %v, want %v", got, ok, at)
			}
			clk.Set(at.Add(-time.Nanosecond))
			if n := tb.Expire(); n != 0 {
				t.Fatalf("Expire() 1ns before the extended expiry = %d, want 0", n)
			}
			if ls := tb.Reserve(1, 1); len(ls) != 0 {
				t.Fatalf("redelivered 1ns before the extended expiry: %v", offsets(ls))
			}
			clk.Set(at)
			if n := tb.Expire(); n != 1 {
				t.Fatalf("Expire() at the extended expiry = %d, want 1", n)
			}
			if err := tb.Ack(l.Offset, l.Nonce); !errors.Is(err, ErrGone) {
				t.Fatalf("Ack after the extended expiry = %v, want ErrGone", err)
			}
			again := reserveOne(t, tb, 1)
			if again.DeliveryCount != 2 {
				t.Fatalf("redelivery count %d, want 2", again.DeliveryCount)
			}
		})
	}
}

// An extend reorders the expiry heap: a lease extended for less than its
// elder's remaining life expires first.
func TestExtendShorterReordersExpiries(t *testing.T) {
	tb, clk := newTable(t, defaultLimits)
	ls := tb.Reserve(2, 2)
	if len(ls) != 2 {
		t.Fatalf("reserved %d, want 2", len(ls))
	}
	mustNil(t, "extend the second for 1s", tb.Extend(ls[1].Offset, ls[1].Nonce, time.Second))
	if at, _ := tb.NextExpiry(); !at.Equal(clk.Now().Add(time.Second)) {
		t.Fatalf("NextExpiry = %v, want the 1s extend's", at)
	}
	clk.Advance(time.Second)
	if n := tb.Expire(); n != 1 {
		t.Fatalf("Expire() = %d, want 1", n)
	}
	mustNil(t, "the first lease is still live", tb.Ack(ls[0].Offset, ls[0].Nonce))
}

func TestDueExtendForADuration(t *testing.T) {
	for _, tc := range extendCases {
		t.Run(tc.name, func(t *testing.T) {
			d, clk, ls := dueLeased(t, 0, 9)
			clk.Advance(time.Second)
			mustNil(t, "extend", d.Extend(9, ls[0].Nonce, tc.d))
			at := clk.Now().Add(tc.life)
			clk.Set(at.Add(-time.Nanosecond))
			if n := d.Expire(); n != 0 {
				t.Fatalf("Expire() 1ns before the extended expiry = %d, want 0", n)
			}
			if got := d.Reserve(1); len(got) != 0 {
				t.Fatalf("redelivered 1ns before the extended expiry: %+v", got)
			}
			clk.Set(at)
			if n := d.Expire(); n != 1 {
				t.Fatalf("Expire() at the extended expiry = %d, want 1", n)
			}
			again := d.Reserve(1)
			if len(again) != 1 || again[0].DeliveryCount != 2 {
				t.Fatalf("after expiry reserved %+v, want 9 on its second delivery", again)
			}
			if _, err := d.Ack(9, ls[0].Nonce); !errors.Is(err, ErrGone) {
				t.Fatalf("ack with the expired lease's nonce: %v, want ErrGone", err)
			}
		})
	}
}

// reserveCases: leases granted for d live d, shorter or longer than the
// table's timeout; d <= 0 is the timeout.
var reserveCases = extendCases

// checkLife asserts that leases granted at the fake clock's now live
// exactly life: none expired 1ns before, all at it (expire returns how
// many lapsed).
func checkLife(t *testing.T, clk *clock.Fake, ls []Lease, life time.Duration, expire func() int) {
	t.Helper()
	at := clk.Now().Add(life)
	for _, l := range ls {
		if !l.Expiry.Equal(at) {
			t.Fatalf("lease of %d expires at %v, want %v", l.Offset, l.Expiry, at)
		}
	}
	clk.Set(at.Add(-time.Nanosecond))
	if n := expire(); n != 0 {
		t.Fatalf("Expire() 1ns before the grant's life ended = %d, want 0", n)
	}
	clk.Set(at)
	if n := expire(); n != len(ls) {
		t.Fatalf("Expire() at the end of the grant's life = %d, want %d", n, len(ls))
	}
}

func TestReserveForADuration(t *testing.T) {
	for _, tc := range reserveCases {
		t.Run(tc.name, func(t *testing.T) {
			tb, clk := newTable(t, defaultLimits)
			ls := tb.ReserveFor(3, 2, tc.d)
			if len(ls) != 2 {
				t.Fatalf("reserved %d, want 2", len(ls))
			}
			checkLife(t, clk, ls, tc.life, tb.Expire)
			// The table's limits are untouched: the next Reserve's leases
			// live the timeout.
			checkLife(t, clk, tb.Reserve(3, 3), vt, tb.Expire)
		})
	}
}

// A frontier-only Reserve (the acked-ahead set full) grants for d too.
func TestReserveForInFrontierOnlyMode(t *testing.T) {
	lim := defaultLimits
	lim.MaxAckedAhead = 0
	tb, clk := newTable(t, lim)
	ls := tb.ReserveFor(5, 5, 5*time.Second)
	if len(ls) != 1 || ls[0].Offset != 0 {
		t.Fatalf("reserved %v, want the frontier record only", offsets(ls))
	}
	checkLife(t, clk, ls, 5*time.Second, tb.Expire)
}

func TestGroupWalkVisibility(t *testing.T) {
	for _, tc := range reserveCases {
		t.Run(tc.name, func(t *testing.T) {
			tb, clk := newTable(t, defaultLimits)
			w := &GroupWalk{Visibility: tc.d}
			offs, _ := tb.Candidates(w, nil, 3, 3)
			cands := keyed{0, 1, -1}.cands(offs)
			ls, stale := tb.ReserveGroups(w, 3, cands, 3)
			if stale || len(ls) != 3 {
				t.Fatalf("walk leased %v (stale %v), want 3", offsets(ls), stale)
			}
			checkLife(t, clk, ls, tc.life, tb.Expire)
		})
	}
}

func TestDueReserveForADuration(t *testing.T) {
	for _, tc := range reserveCases {
		t.Run(tc.name, func(t *testing.T) {
			d, clk, ls := dueLeased(t, tc.d, 9, 4)
			checkLife(t, clk, ls, tc.life, d.Expire)
			checkLife(t, clk, d.Reserve(2), vt, d.Expire)
		})
	}
}

// dueLeased is a due table on a fake clock holding offs, all leased for
// life (ReserveFor).
func dueLeased(t *testing.T, life time.Duration, offs ...uint64) (*Due, *clock.Fake, []Lease) {
	t.Helper()
	clk := clock.NewFake(time.Unix(1000, 0))
	d := NewDue(0, defaultLimits, clk)
	for i, x := range offs {
		d.Add(x, int64(i))
	}
	ls := d.ReserveFor(len(offs), life)
	if len(ls) != len(offs) {
		t.Fatalf("reserved %d, want %d", len(ls), len(offs))
	}
	return d, clk, ls
}
