package lease

import (
	"errors"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// A deferred record does not hold back the records behind it: they are
// acked and the frontier passes it, and it takes no acked-ahead capacity.
func TestDeferLetsTheFrontierPass(t *testing.T) {
	lim := defaultLimits
	lim.MaxAckedAhead = 2
	tb := New(0, 0, lim, clock.NewFake(time.Unix(1000, 0)))
	ls := tb.Reserve(10, 10)
	if len(ls) != 3 { // the frontier record plus an acked-ahead capacity of 2
		t.Fatalf("reserved %d, want 3", len(ls))
	}
	if err := tb.Defer(ls[0].Offset, ls[0].Nonce); err != nil {
		t.Fatal(err)
	}
	if f := tb.Frontier(); f != 1 {
		t.Fatalf("frontier %d after deferring the frontier record, want 1", f)
	}
	for _, l := range ls[1:] {
		if err := tb.Ack(l.Offset, l.Nonce); err != nil {
			t.Fatal(err)
		}
	}
	if f := tb.Frontier(); f != 3 {
		t.Fatalf("frontier %d, want 3", f)
	}
	// Defer above a gap: it must not use the acked-ahead capacity.
	ls = tb.Reserve(10, 3)
	for _, l := range ls[1:] {
		if err := tb.Defer(l.Offset, l.Nonce); err != nil {
			t.Fatal(err)
		}
	}
	if st := tb.Stats(); st.AckedAhead != 0 || st.Deferred != 3 || st.Skipped != 0 {
		t.Fatalf("stats %+v: deferred records counted as acked-ahead or skipped", st)
	}
	if err := tb.Ack(ls[0].Offset, ls[0].Nonce); err != nil {
		t.Fatal(err)
	}
	if f := tb.Frontier(); f != 6 {
		t.Fatalf("frontier %d, want 6 past the deferred records", f)
	}
	if err := tb.Defer(ls[1].Offset, ls[1].Nonce); !errors.Is(err, ErrGone) {
		t.Fatalf("second Defer: %v, want ErrGone", err)
	}
}

func TestDueLeasesAcksAndRedelivers(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	lim := defaultLimits
	lim.VisibilityTimeout = 10 * time.Second
	d := NewDue(3, lim, clk)
	d.Add(50, 111)
	d.Add(7, 222)
	d.Add(50, 999) // held already: unchanged
	ls := d.Reserve(10)
	if len(ls) != 2 || ls[0].Offset != 50 || ls[1].Offset != 7 || ls[0].DeliveryCount != 1 {
		t.Fatalf("reserved %+v, want 50 then 7 (the order they fell due)", ls)
	}
	if got := d.Reserve(10); len(got) != 0 {
		t.Fatalf("reserved %v while both are leased", got)
	}
	due, err := d.Ack(50, ls[0].Nonce)
	if err != nil || due != 111 {
		t.Fatalf("ack: due %d, %v; want 111", due, err)
	}
	if d.Holds(50) {
		t.Fatal("an acked due record is still held")
	}
	if _, err := d.Ack(7, ls[1].Nonce+1); !errors.Is(err, ErrGone) {
		t.Fatalf("ack with a wrong nonce: %v, want ErrGone", err)
	}
	clk.Advance(10 * time.Second)
	if n := d.Expire(); n != 1 {
		t.Fatalf("expired %d, want 1", n)
	}
	again := d.Reserve(10)
	if len(again) != 1 || again[0].Offset != 7 || again[0].DeliveryCount != 2 {
		t.Fatalf("after expiry reserved %+v, want 7 on its second delivery", again)
	}
	if _, err := d.Ack(7, ls[1].Nonce); !errors.Is(err, ErrGone) {
		t.Fatalf("ack with the expired lease's nonce: %v, want ErrGone", err)
	}
	if err := d.Nack(7, again[0].Nonce); err != nil {
		t.Fatal(err)
	}
	if r, l := d.Len(); r != 1 || l != 0 {
		t.Fatalf("after nack %d ready %d leased, want 1 0", r, l)
	}
	if due, ok := d.Drop(7); !ok || due != 222 {
		t.Fatalf("drop: %d %v", due, ok)
	}
	if r, l := d.Len(); r != 0 || l != 0 {
		t.Fatalf("after drop %d ready %d leased", r, l)
	}
}

func TestDueRespectsTheInFlightCap(t *testing.T) {
	lim := defaultLimits
	lim.MaxInFlight = 2
	d := NewDue(0, lim, clock.NewFake(time.Unix(1000, 0)))
	for i := range 5 {
		d.Add(uint64(i), 0)
	}
	if got := d.Reserve(10); len(got) != 2 {
		t.Fatalf("reserved %d with a cap of 2", len(got))
	}
}
