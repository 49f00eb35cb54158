package client

import (
	"context"
	"time"
)

// Backoff is the pause schedule between tries: Initial before the first
// retry, doubling after each one, never above Max. Zero fields take the
// defaults (100 ms, 2 s). It is the one backoff of this module: the
// client's own retries and every retry loop the CLI runs use it, so they
// all pace the same way.
//
// Delay is pure (no clock), so code on a fake clock can use the schedule
// and do its own sleeping.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
}

// The defaults: a node that is starting answers within a second or two,
// and a cap of 2 s keeps a waiting command responsive once it does.
const (
	defaultBackoffInitial = 100 * time.Millisecond
	defaultBackoffMax     = 2 * time.Second
)

// Delay is the pause before retry n (0 for the first retry).
func (b Backoff) Delay(n int) time.Duration {
	initial, ceiling := b.Initial, b.Max
	if initial <= 0 {
		initial = defaultBackoffInitial
	}
	if ceiling <= 0 {
		ceiling = max(defaultBackoffMax, initial)
	}
	d := initial
	for i := 0; i < n && d < ceiling; i++ {
		d *= 2 // stops doubling at the ceiling, so it cannot overflow
	}
	return min(d, ceiling)
}

// Pause is the wait before retry n when the server asked for retryAfter
// (its Retry-After, 0 when absent): the longer of the two, because a
// server that says when to come back knows better than the schedule.
func (b Backoff) Pause(n int, retryAfter time.Duration) time.Duration {
	return max(b.Delay(n), retryAfter)
}

// Sleep waits d, or until ctx ends (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
