package fanout

import (
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// Stepping an engine that runs on a clock.Fake. A parked engine is one
// whose goroutines all wait on the clock: the reconciler's ticker plus one
// timer per cursor (its long-poll, linger, delay sleep or backoff). Tests
// wait for that, then step the clock, so "nothing happens for 30 s" is a
// step, not a sleep, and a step lands where the code is waiting.

// parked waits (in real time, bounded) until n waiters are on clk.
func parked(t testing.TB, clk *clock.Fake, n int) {
	t.Helper()
	if !clk.BlockUntil(n, 10*time.Second) {
		t.Fatalf("the engine never parked on the clock: %d waiters, want %d", clk.Waiters(), n)
	}
}

// step waits until the engine is parked (n waiters) and moves clk by d.
func step(t testing.TB, clk *clock.Fake, n int, d time.Duration) {
	t.Helper()
	parked(t, clk, n)
	clk.Advance(d)
}

// drive steps clk by d each time the engine parks (n waiters) until cond
// holds; it fails after 10 s of real time.
func drive(t testing.TB, clk *clock.Fake, n int, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out driving the clock (now %v) waiting for %s", clk.Now(), what)
		}
		if clk.BlockUntil(n, 100*time.Millisecond) && !cond() {
			clk.Advance(d)
		}
	}
}
