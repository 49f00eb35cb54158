package clock

import (
	"context"
	"testing"
	"time"
)

func fired(ch <-chan time.Time) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestTimerFiresOnlyWhenStepped(t *testing.T) {
	f := NewFake(time.Time{})
	tm := f.NewTimer(10 * time.Second)
	f.Advance(9 * time.Second)
	if fired(tm.C()) {
		t.Fatal("fired early")
	}
	f.Advance(time.Second)
	if !fired(tm.C()) {
		t.Fatal("did not fire at its deadline")
	}
	if f.Waiters() != 0 {
		t.Fatalf("a fired timer still pending: %d", f.Waiters())
	}
}

func TestTimerStopAndReset(t *testing.T) {
	f := NewFake(time.Time{})
	tm := f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer = false")
	}
	f.Advance(time.Hour)
	if fired(tm.C()) {
		t.Fatal("a stopped timer fired")
	}
	tm.Reset(5 * time.Second)
	f.Advance(4 * time.Second)
	if fired(tm.C()) {
		t.Fatal("reset timer fired early")
	}
	f.Advance(time.Second)
	if !fired(tm.C()) {
		t.Fatal("reset timer did not fire")
	}
}

func TestTickerTicksEachPeriodAndDropsWhenBehind(t *testing.T) {
	f := NewFake(time.Time{})
	tk := f.NewTicker(time.Second)
	defer tk.Stop()
	for i := 0; i < 3; i++ {
		f.Advance(time.Second)
		if !fired(tk.C()) {
			t.Fatalf("tick %d missing", i)
		}
	}
	f.Advance(10 * time.Second) // ten periods at once: one tick, as time.Ticker
	if !fired(tk.C()) || fired(tk.C()) {
		t.Fatal("a long step should deliver exactly one tick")
	}
	f.Advance(time.Second)
	if !fired(tk.C()) {
		t.Fatal("ticker stopped ticking after a long step")
	}
}

func TestZeroTimerFiresAtOnce(t *testing.T) {
	f := NewFake(time.Time{})
	if !fired(f.After(0)) {
		t.Fatal("After(0) did not fire at once")
	}
}

func TestBlockUntilSeesAParkedSleeper(t *testing.T) {
	f := NewFake(time.Time{})
	done := make(chan error, 1)
	go func() { done <- Sleep(context.Background(), f, time.Minute) }()
	if !f.BlockUntil(1, 5*time.Second) {
		t.Fatal("the sleeper never parked on the clock")
	}
	select {
	case <-done:
		t.Fatal("Sleep returned before the clock moved")
	default:
	}
	f.Advance(time.Minute)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	f := NewFake(time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, f, time.Hour); err == nil {
		t.Fatal("Sleep ignored a cancelled context")
	}
	if f.Waiters() != 0 {
		t.Fatal("Sleep left its timer pending")
	}
}

func TestNegativeStepFiresNothing(t *testing.T) {
	f := NewFake(time.Time{})
	tm := f.NewTimer(time.Second)
	f.Advance(-time.Hour)
	if fired(tm.C()) {
		t.Fatal("stepping back fired a timer")
	}
	if got := f.Now(); !got.Equal(Epoch.Add(-time.Hour)) {
		t.Fatalf("Now = %v", got)
	}
}

func TestRealClockIsTheTimePackage(t *testing.T) {
	if d := Since(Real, time.Now()); d < 0 || d > time.Second {
		t.Fatalf("Since(Real, now) = %v", d)
	}
	if Or(nil) != Real {
		t.Fatal("Or(nil) is not Real")
	}
	if !fired(waitFor(Real.After(time.Millisecond))) {
		t.Fatal("Real.After never fired")
	}
}

func waitFor(ch <-chan time.Time) <-chan time.Time {
	out := make(chan time.Time, 1)
	select {
	case v := <-ch:
		out <- v
	case <-time.After(5 * time.Second):
	}
	return out
}

// Next names the earliest pending waiter, ignores stopped ones, and says
// when none is pending.
func TestNextIsTheEarliestPendingWaiter(t *testing.T) {
	c := NewFake(time.Time{})
	if _, ok := c.Next(); ok {
		t.Fatal("Next found a waiter on a new clock")
	}
	late := c.NewTimer(3 * time.Second)
	early := c.NewTimer(time.Second)
	if at, ok := c.Next(); !ok || !at.Equal(Epoch.Add(time.Second)) {
		t.Fatalf("Next = %v, %v; want %v", at, ok, Epoch.Add(time.Second))
	}
	early.Stop()
	if at, ok := c.Next(); !ok || !at.Equal(Epoch.Add(3*time.Second)) {
		t.Fatalf("Next after the early timer stopped = %v, %v; want %v", at, ok, Epoch.Add(3*time.Second))
	}
	late.Stop()
	if _, ok := c.Next(); ok {
		t.Fatal("Next found a waiter after every timer stopped")
	}
}
