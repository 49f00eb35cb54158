package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// fakeLimiter records, at each Wait, how many requests the broker had
// seen, and refuses the wait numbered refuseAt (from 1) if set.
type fakeLimiter struct {
	b        *broker
	seen     []int
	refuseAt int
}

func (l *fakeLimiter) Wait(ctx context.Context) error {
	l.seen = append(l.seen, len(l.b.requests()))
	if len(l.seen) == l.refuseAt {
		return context.Canceled
	}
	return ctx.Err()
}

func withLimiter(t *testing.T, l limiter, rates *[]float64) {
	t.Helper()
	orig := newLimiter
	newLimiter = func(r float64) limiter { *rates = append(*rates, r); return l }
	t.Cleanup(func() { newLimiter = orig })
}

// Every message of pub --rate waits for the limiter first, and a refused
// wait sends nothing more.
func TestPubWaitsForTheLimiterBeforeEachMessage(t *testing.T) {
	b := newBroker(t, accept)
	l := &fakeLimiter{b: b}
	var rates []float64
	withLimiter(t, l, &rates)
	mustOK(t, against(b).run(t, "pub", "orders", "m{i}", "--count", "3", "--rate", "2.5"))
	if len(rates) != 1 || rates[0] != 2.5 {
		t.Fatalf("limiter built for rates %v, want [2.5]", rates)
	}
	if got := l.seen; len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Fatalf("requests seen at each wait %v, want [0 1 2]", got)
	}

	b2 := newBroker(t, accept)
	l2 := &fakeLimiter{b: b2, refuseAt: 2}
	withLimiter(t, l2, &rates)
	r := against(b2).run(t, "pub", "orders", "m{i}", "--count", "5", "--rate", "10")
	if r.code == 0 || len(b2.requests()) != 1 {
		t.Fatalf("a refused wait: exit %d after %d requests, want a failure after 1", r.code, len(b2.requests()))
	}
}

// The real limiter spaces messages 1/rate apart and never bursts: after a
// long idle spell only one message goes at once. Reservations at fixed
// instants, so no clock is read.
func TestPubLimiterSpacesWithoutBursts(t *testing.T) {
	l, ok := newLimiter(4).(*rate.Limiter)
	if !ok {
		t.Fatalf("newLimiter(4) is %T, want *rate.Limiter", newLimiter(4))
	}
	t0 := time.Unix(1_000_000, 0)
	for i, want := range []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond} {
		if got := l.ReserveN(t0, 1).DelayFrom(t0); got != want {
			t.Errorf("message %d at t0: delay %v, want %v", i, got, want)
		}
	}
	later := t0.Add(time.Minute)
	for i, want := range []time.Duration{0, 250 * time.Millisecond} {
		if got := l.ReserveN(later, 1).DelayFrom(later); got != want {
			t.Errorf("after a minute idle, message %d: delay %v, want %v (no catch-up burst)", i, got, want)
		}
	}
	if _, ok := newLimiter(0).(unlimited); !ok {
		t.Errorf("no --rate: %T, want no limit", newLimiter(0))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := newLimiter(0).Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("unlimited wait on a cancelled context: %v", err)
	}
}
