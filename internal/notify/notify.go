// Package notify is the wake-up primitive of long-pollers: a channel that is
// closed and replaced. A waiter takes the channel, re-checks its condition,
// then blocks on it; a Fire that races the check leaves it an already
// closed channel, so no wake-up is lost and no per-waiter timer is needed.
package notify

import "sync"

// Broadcast wakes every current waiter at once. The zero value is not
// usable; call New.
type Broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

// New returns a Broadcast with no waiters.
func New() *Broadcast { return &Broadcast{ch: make(chan struct{})} }

// Wait returns the channel the next Fire closes.
func (b *Broadcast) Wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

// Fire wakes every waiter.
func (b *Broadcast) Fire() {
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}
