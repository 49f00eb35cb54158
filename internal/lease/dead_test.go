package lease

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

func deadLimits(max int) Limits {
	l := defaultLimits
	l.MaxDeliveries = max
	return l
}

// deliverAndLapse leases offset x of tb once more and ends the lease by
// expiry (advancing clk past the visibility timeout) or nack.
func deliverAndLapse(t *testing.T, tb *Table, clk *clock.Fake, hwm, x uint64, nack bool) Lease {
	t.Helper()
	ls := byOffset(tb.Reserve(hwm, 100))
	l, ok := ls[x]
	if !ok {
		t.Fatalf("offset %d not offered; got %v", x, offsets(tb.Reserve(hwm, 0)))
	}
	for o, other := range ls {
		if o != x {
			mustNil(t, "release others", tb.Release(o, other.Nonce))
		}
	}
	if nack {
		mustNil(t, "nack", tb.Nack(x, l.Nonce))
	} else {
		clk.Advance(vt)
		tb.Expire()
	}
	return l
}

// TestDeadHeldAfterMaxDeliveries: with MaxDeliveries 3, the third lapse of
// a record — by expiry or by nack — holds it for the dead-letter topic:
// it is not offered again (however long one waits) and the others are.
func TestDeadHeldAfterMaxDeliveries(t *testing.T) {
	for _, tc := range []struct {
		name string
		nack bool
		why  Reason
	}{{"expiry", false, ReasonExpired}, {"nack", true, ReasonNacked}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(1000, 0))
			tb := New(0, 0, deadLimits(3), clk)
			for i := 1; i <= 3; i++ {
				if l := deliverAndLapse(t, tb, clk, 3, 1, tc.nack); l.DeliveryCount != i {
					t.Fatalf("delivery %d: count %d", i, l.DeliveryCount)
				}
			}
			due := tb.DueDead(10)
			if len(due) != 1 || due[0].Offset != 1 || due[0].DeliveryCount != 3 || due[0].Reason != tc.why {
				t.Fatalf("DueDead = %+v; want offset 1, count 3, reason %s", due, tc.why)
			}
			for round := 0; round < 3; round++ {
				got := tb.Reserve(3, 10)
				for _, l := range got {
					if l.Offset == 1 {
						t.Fatalf("held offset 1 offered again: %v", offsets(got))
					}
					mustNil(t, "release", tb.Release(l.Offset, l.Nonce))
				}
				clk.Advance(vt)
				tb.Expire()
			}
			if st := tb.Stats(); st.DeadLetter != 1 {
				t.Fatalf("Stats.DeadLetter = %d; want 1", st.DeadLetter)
			}
		})
	}
}

// TestDeadSettleAfterCommit: a held offset stays unsettled (the frontier
// does not pass it) until SettleDead; then it is settled like an ack.
func TestDeadSettleAfterCommit(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	tb := New(0, 0, deadLimits(1), clk)
	deliverAndLapse(t, tb, clk, 2, 0, true)
	if f := tb.Frontier(); f != 0 {
		t.Fatalf("frontier %d before the dead-letter commit; want 0", f)
	}
	// The other record is deliverable meanwhile: only the held one stalls.
	ls := tb.Reserve(2, 10)
	if got := offsets(ls); len(got) != 1 || got[0] != 1 {
		t.Fatalf("offered %v; want only offset 1", got)
	}
	mustNil(t, "ack 1", tb.Ack(1, ls[0].Nonce))
	if f := tb.Frontier(); f != 0 {
		t.Fatalf("frontier %d with offset 0 held; want 0", f)
	}
	mustNil(t, "settle dead", tb.SettleDead(0))
	if f := tb.Frontier(); f != 2 {
		t.Fatalf("frontier %d after settling; want 2", f)
	}
	if err := tb.SettleDead(0); !errors.Is(err, ErrSettled) {
		t.Fatalf("second SettleDead: %v; want ErrSettled", err)
	}
	if err := tb.SettleDead(7); !errors.Is(err, ErrGone) || errors.Is(err, ErrSettled) {
		t.Fatalf("SettleDead of an offset never held: %v; want ErrGone", err)
	}
	if n := tb.DeadCount(); n != 0 {
		t.Fatalf("DeadCount %d after settle", n)
	}
}

// TestDeadDeferAndRetry: a failed commit defers the offset until the given
// time; it is not due before, is due at it, and is never offered to
// consumers in between.
func TestDeadDeferAndRetry(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	tb := New(0, 0, deadLimits(1), clk)
	deliverAndLapse(t, tb, clk, 1, 0, false)
	if !tb.DeferDead(0, clk.Now().Add(time.Second)) {
		t.Fatal("DeferDead of a held offset: false")
	}
	if due := tb.DueDead(10); len(due) != 0 {
		t.Fatalf("due before its backoff: %+v", due)
	}
	if got := tb.Reserve(1, 10); len(got) != 0 {
		t.Fatalf("held offset offered while its commit is deferred: %v", offsets(got))
	}
	clk.Advance(time.Second)
	due := tb.DueDead(10)
	if len(due) != 1 || due[0].Attempts != 1 {
		t.Fatalf("due at its backoff: %+v; want one, 1 attempt", due)
	}
	if tb.DeferDead(5, clk.Now()) {
		t.Fatal("DeferDead of an offset not held: true")
	}
}

// TestDeadRevive: turning the policy off before the commit gives the held
// records back to consumers, counts kept.
func TestDeadRevive(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	tb := New(0, 0, deadLimits(1), clk)
	deliverAndLapse(t, tb, clk, 1, 0, true)
	tb.SetLimits(defaultLimits)
	if n := tb.ReviveDead(); n != 1 {
		t.Fatalf("ReviveDead = %d; want 1", n)
	}
	ls := tb.Reserve(1, 10)
	if len(ls) != 1 || ls[0].Offset != 0 || ls[0].DeliveryCount != 2 {
		t.Fatalf("after revive: %+v; want offset 0, second delivery", ls)
	}
}

// TestDeadLoweredLimitHoldsAtReserve: a record whose count already reaches
// a lowered MaxDeliveries (or a count carried over from before a restart)
// is held when it would be offered, not delivered once more.
func TestDeadLoweredLimitHoldsAtReserve(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	tb := New(0, 0, deadLimits(5), clk)
	deliverAndLapse(t, tb, clk, 2, 0, true)
	deliverAndLapse(t, tb, clk, 2, 0, true)
	tb.SetLimits(deadLimits(2))
	got := offsets(tb.Reserve(2, 10))
	if len(got) != 1 || got[0] != 1 {
		t.Fatalf("offered %v; want only offset 1 (offset 0 used its 2 deliveries)", got)
	}
	due := tb.DueDead(10)
	if len(due) != 1 || due[0].Offset != 0 || due[0].Reason != ReasonExpired {
		t.Fatalf("DueDead = %+v; want offset 0 held", due)
	}
}

// TestDeadDroppedByRetention: retention passing over a held offset settles
// it; SettleDead then says so.
func TestDeadDroppedByRetention(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	tb := New(0, 0, deadLimits(1), clk)
	deliverAndLapse(t, tb, clk, 3, 1, true)
	tb.AdvanceTo(2)
	if n := tb.DeadCount(); n != 0 {
		t.Fatalf("DeadCount %d after retention passed it", n)
	}
	if err := tb.SettleDead(1); !errors.Is(err, ErrSettled) {
		t.Fatalf("SettleDead after retention: %v; want ErrSettled", err)
	}
}

// TestDeadCountsAgainstAckRoom: held offsets take ack room like leases,
// so the held set cannot outgrow MaxAckedAhead and their settles always
// fit.
func TestDeadCountsAgainstAckRoom(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	l := deadLimits(1)
	l.MaxAckedAhead = 2
	tb := New(0, 0, l, clk)
	ls := tb.Reserve(10, 3) // 0 (frontier), 1, 2
	if got := offsets(ls); len(got) != 3 {
		t.Fatalf("reserved %v; want 3", got)
	}
	m := byOffset(ls)
	mustNil(t, "nack 1", tb.Nack(1, m[1].Nonce))
	mustNil(t, "nack 2", tb.Nack(2, m[2].Nonce))
	if got := tb.Reserve(10, 10); len(got) != 0 {
		t.Fatalf("offered %v with the ack room taken by two holds", offsets(got))
	}
	mustNil(t, "settle 1", tb.SettleDead(1))
	mustNil(t, "settle 2", tb.SettleDead(2))
	mustNil(t, "ack 0", tb.Ack(0, m[0].Nonce))
	if f := tb.Frontier(); f != 3 {
		t.Fatalf("frontier %d; want 3", f)
	}
}

// TestDeadSeededCountHoldsAtReserve: a count carried over from before a
// restart (SeedDeliveries) that reaches MaxDeliveries holds the record
// the first time it would be offered: the lease that used its last
// delivery ended with the old life of the partition.
func TestDeadSeededCountHoldsAtReserve(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	tb := New(0, 0, deadLimits(2), clk)
	if n := tb.SeedDeliveries([]DeliveryCount{{Offset: 0, Count: 2}, {Offset: 1, Count: 1}}); n != 2 {
		t.Fatalf("seeded %d counts; want 2", n)
	}
	ls := tb.Reserve(3, 10)
	if got := offsets(ls); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("offered %v; want 1 and 2 (0 used its deliveries before the restart)", got)
	}
	if m := byOffset(ls); m[1].DeliveryCount != 2 {
		t.Fatalf("offset 1 delivered as count %d; want 2", m[1].DeliveryCount)
	}
	due := tb.DueDead(10)
	if len(due) != 1 || due[0].Offset != 0 || due[0].DeliveryCount != 2 || due[0].Reason != ReasonExpired {
		t.Fatalf("DueDead = %+v; want offset 0, count 2, expired", due)
	}
}
