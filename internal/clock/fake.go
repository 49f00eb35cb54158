package clock

import (
	"sort"
	"sync"
	"time"
)

// Epoch is where a Fake starts by default: a fixed, recent, non-zero
// instant, so values derived from it are ordinary positive numbers.
var Epoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// Fake is a manual clock. Safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*waiter
	changed chan struct{} // closed and replaced whenever waiters change
}

// waiter is one pending timer, ticker or After channel.
type waiter struct {
	at     time.Time
	period time.Duration // tickers only
	ch     chan time.Time
	active bool
}

// NewFake returns a clock stopped at start (Epoch if start is zero).
func NewFake(start time.Time) *Fake {
	if start.IsZero() {
		start = Epoch
	}
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock forward by d, fires what came due, and returns
// the new time. A negative d steps it back (wall-clock steps) and fires
// nothing.
func (f *Fake) Advance(d time.Duration) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	f.fireLocked()
	return f.now
}

// Set moves the clock to t and fires what came due.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t
	f.fireLocked()
}

// fireLocked delivers every due waiter in deadline order; a ticker due
// several times over gets one tick (as time.Ticker drops ticks for slow
// receivers) and its next deadline after now.
func (f *Fake) fireLocked() {
	sort.SliceStable(f.waiters, func(i, j int) bool { return f.waiters[i].at.Before(f.waiters[j].at) })
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if !w.active {
			continue
		}
		if w.at.After(f.now) {
			kept = append(kept, w)
			continue
		}
		select {
		case w.ch <- f.now:
		default: // buffered channel already holds an undelivered tick
		}
		if w.period > 0 {
			for !w.at.After(f.now) {
				w.at = w.at.Add(w.period)
			}
			kept = append(kept, w)
		} else {
			w.active = false
		}
	}
	f.waiters = kept
	f.signalLocked()
}

func (f *Fake) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Fake) add(w *waiter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.active = true
	if !w.at.After(f.now) {
		w.ch <- f.now
		if w.period == 0 {
			w.active = false
			return
		}
		w.at = w.at.Add(w.period)
	}
	f.waiters = append(f.waiters, w)
	f.signalLocked()
}

func (f *Fake) remove(w *waiter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	was := w.active
	w.active = false
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			break
		}
	}
	f.signalLocked()
	return was
}

// Waiters is how many timers, tickers and After channels are pending.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, w := range f.waiters {
		if w.active {
			n++
		}
	}
	return n
}

// Next returns when the earliest pending waiter fires, and false when
// none is pending: a test parked on the clock (BlockUntil) reads which
// wait the code under test chose.
func (f *Fake) Next() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var at time.Time
	found := false
	for _, w := range f.waiters {
		if w.active && (!found || w.at.Before(at)) {
			at, found = w.at, true
		}
	}
	return at, found
}

// BlockUntil waits (in real time, at most limit) until at least n waiters
// are pending, and reports whether they were: a test calls it to know the
// code under test is parked on the clock before stepping it.
func (f *Fake) BlockUntil(n int, limit time.Duration) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		count := 0
		for _, w := range f.waiters {
			if w.active {
				count++
			}
		}
		changed := f.changed
		f.mu.Unlock()
		if count >= n {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}

// After is a channel that receives once the clock reaches now+d.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	return f.NewTimer(d).C()
}

// NewTimer makes a timer that fires once the clock reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, w: &waiter{at: f.Now().Add(d), ch: make(chan time.Time, 1)}}
	f.add(t.w)
	return t
}

// NewTicker makes a ticker of period d (which must be positive).
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive ticker period")
	}
	t := &fakeTicker{f: f, w: &waiter{at: f.Now().Add(d), period: d, ch: make(chan time.Time, 1)}}
	f.add(t.w)
	return t
}

type fakeTimer struct {
	f *Fake
	w *waiter
}

func (t *fakeTimer) C() <-chan time.Time { return t.w.ch }
func (t *fakeTimer) Stop() bool          { return t.f.remove(t.w) }

func (t *fakeTimer) Reset(d time.Duration) bool {
	was := t.f.remove(t.w)
	t.w.at = t.f.Now().Add(d)
	t.f.add(t.w)
	return was
}

type fakeTicker struct {
	f *Fake
	w *waiter
}

func (t *fakeTicker) C() <-chan time.Time { return t.w.ch }
func (t *fakeTicker) Stop()               { t.f.remove(t.w) }

func (t *fakeTicker) Reset(d time.Duration) {
	t.f.remove(t.w)
	t.w.period = d
	t.w.at = t.f.Now().Add(d)
	t.f.add(t.w)
}
