package storage

import "sync"

// broadcast wakes every waiter at once: a channel that is closed and
// replaced. A waiter takes the channel, re-checks its condition, then
// blocks on it; a close that races the check leaves it an already closed
// channel, so no wake-up is lost and no per-waiter timer is needed.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func newBroadcast() *broadcast { return &broadcast{ch: make(chan struct{})} }

func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *broadcast) fire() {
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}
