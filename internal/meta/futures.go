package meta

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// futureWaitsBound is how long Close waits for the goroutines still
// waiting on Raft futures before it shuts Raft down anyway.
const futureWaitsBound = 10 * time.Second

// futureWaits counts the goroutines that wait on Raft futures for callers
// that stopped waiting (their context ended first).
//
// hashicorp/raft does not resolve an Apply future whose entry committed
// but was not yet applied when Raft shut down: its FSM goroutine exits
// with the entry still queued, and the future has no shutdown channel.
// A goroutine waiting on such a future would wait for ever. Close
// therefore stops new waits, lets the running ones end while Raft still
// runs (each ends when its entry is applied or leadership is lost, so
// within the leader lease), and only then shuts Raft down.
//
// Invariant: no wait starts after stop returned.
type futureWaits struct {
	mu      sync.RWMutex
	stopped bool
	running sync.WaitGroup
}

// wait waits for f or ctx, whichever ends first; the goroutine waiting on
// f outlives an ended ctx until Raft resolves f. After stop it returns
// raft.ErrRaftShutdown without starting anything.
func (w *futureWaits) wait(ctx context.Context, f raft.Future) error {
	w.mu.RLock()
	if w.stopped {
		w.mu.RUnlock()
		return raft.ErrRaftShutdown
	}
	w.running.Add(1)
	w.mu.RUnlock()
	done := make(chan error, 1)
	go func() {
		defer w.running.Done()
		done <- f.Error()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop refuses new waits and waits up to bound for the running ones; it
// reports whether they all ended.
func (w *futureWaits) stop(bound time.Duration) bool {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		w.running.Wait()
		close(ended)
	}()
	select {
	case <-ended:
		return true
	case <-time.After(bound):
		return false
	}
}
