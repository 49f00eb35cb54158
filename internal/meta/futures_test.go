package meta

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// heldFuture is a raft.Future resolved only when release is closed.
type heldFuture struct {
	release  chan struct{}
	resolved atomic.Bool
}

func (f *heldFuture) Error() error {
	<-f.release
	f.resolved.Store(true)
	return nil
}

func TestFutureWaitsCloseLetsAbandonedWaitsEnd(t *testing.T) {
	var w futureWaits
	f := &heldFuture{release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.wait(ctx, f); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait with an ended context = %v, want context.Canceled", err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		close(f.release)
	}()
	if !w.stop(10 * time.Second) {
		t.Fatal("stop gave up on a future that was resolved")
	}
	if !f.resolved.Load() {
		t.Fatal("stop returned while a goroutine still waited on its future")
	}
	if err := w.wait(context.Background(), &heldFuture{}); !errors.Is(err, raft.ErrRaftShutdown) {
		t.Fatalf("wait after stop = %v, want raft.ErrRaftShutdown", err)
	}
}

func TestFutureWaitsStopIsBounded(t *testing.T) {
	var w futureWaits
	f := &heldFuture{release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = w.wait(ctx, f)
	if w.stop(10 * time.Millisecond) {
		t.Fatal("stop said every wait ended while one still waited")
	}
	close(f.release) // lets the helper goroutine end before goleak looks
	w.running.Wait()
}
