package auth

import (
	"sync"
	"time"
)

// failures slows a source that keeps failing: the first freeFailures
// failures within window cost nothing extra, each one after doubles a
// delay from baseDelay up to maxDelay. State is per source address, bounded
// (the oldest entries go when full), and forgotten a window after a
// source's last failure.
type failures struct {
	mu  sync.Mutex
	by  map[string]*failureRun
	now func() time.Time
}

type failureRun struct {
	count int
	last  time.Time
}

const (
	freeFailures   = 5
	failureWindow  = time.Minute
	baseDelay      = 100 * time.Millisecond
	maxDelay       = 3 * time.Second
	maxFailSources = 10_000
)

func newFailures() *failures {
	return &failures{by: make(map[string]*failureRun), now: time.Now}
}

// fail records a failed attempt from source and returns how long to hold
// the answer back.
func (f *failures) fail(source string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	r, ok := f.by[source]
	if !ok || now.Sub(r.last) > failureWindow {
		if len(f.by) >= maxFailSources {
			f.evict(now)
		}
		r = &failureRun{}
		f.by[source] = r
	}
	r.count++
	r.last = now
	if r.count <= freeFailures {
		return 0
	}
	d := baseDelay << min(r.count-freeFailures-1, 10)
	return min(d, maxDelay)
}

// evict drops runs older than the window, or everything if none is.
func (f *failures) evict(now time.Time) {
	for k, r := range f.by {
		if now.Sub(r.last) > failureWindow {
			delete(f.by, k)
		}
	}
	if len(f.by) >= maxFailSources {
		clear(f.by)
	}
}
