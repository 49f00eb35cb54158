//go:build narad_netfault

package netfault

import (
	"sync"
	"time"
)

// deadline is a settable point in time whose waiters wake when it moves.
type deadline struct {
	mu    sync.Mutex
	t     time.Time
	moved chan struct{}
}

func (d *deadline) init() { d.moved = make(chan struct{}) }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.t = t
	close(d.moved)
	d.moved = make(chan struct{})
}

// get is the deadline (zero: none) and a channel closed when it moves.
func (d *deadline) get() (time.Time, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.t, d.moved
}

func expired(t time.Time) bool { return !t.IsZero() && !time.Now().Before(t) }

// timerFor fires at t; with no deadline it never fires (until stopped).
func timerFor(t time.Time) *time.Timer {
	if t.IsZero() {
		return time.NewTimer(time.Duration(1<<63 - 1))
	}
	return time.NewTimer(time.Until(t))
}
