package lease

import (
	"sync"
	"time"
)

// Clock is the table's only source of time. It is injected so that tests
// can drive expiry exactly (to the nanosecond) without sleeping.
type Clock interface {
	Now() time.Time
}

// RealClock reads the system clock. time.Now carries a monotonic reading,
// so expiry comparisons are immune to wall-clock steps (NTP, manual changes).
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// FakeClock is a manual clock for tests, exported so other packages' tests
// can drive a Table (and anything built on it) deterministically. The zero
// value is not usable; use NewFakeClock. It is safe for concurrent use.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// FakeEpoch is the default start of a FakeClock: a fixed, recent, non-zero
// instant, so that nonce seeds and expiries derived from it are ordinary
// positive numbers.
var FakeEpoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// NewFakeClock returns a clock stopped at start (FakeEpoch if start is zero).
func NewFakeClock(start time.Time) *FakeClock {
	if start.IsZero() {
		start = FakeEpoch
	}
	return &FakeClock{now: start}
}

// Now returns the current fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new time. A negative
// d is allowed (to test clock steps) but the Table never relies on it.
func (c *FakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
