package route

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// The cap bounds commits in flight: 20 buckets, Parallel 16, every commit
// held until the test lets go: exactly 16 start, and the rest only as
// those finish.
func TestPassBoundsCommitsInFlight(t *testing.T) {
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, 20)
	done := make(chan []error)
	go func() {
		done <- Pass{Parallel: 16}.Commit(context.Background(), 20, func(context.Context, int) error {
			n := inFlight.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			started <- struct{}{}
			<-release
			inFlight.Add(-1)
			return nil
		})
	}()
	for i := 0; i < 16; i++ {
		<-started
	}
	// Let any goroutine a missing cap would have started run before the
	// release: the count is then 20, not 16. (No sleep: a correct pass
	// passes whatever the scheduler does.)
	for i := 0; i < 1000; i++ {
		runtime.Gosched()
	}
	if n := inFlight.Load(); n != 16 {
		t.Fatalf("%d commits in flight, want 16", n)
	}
	close(release)
	for _, err := range <-done {
		if err != nil {
			t.Fatal(err)
		}
	}
	if peak.Load() != 16 {
		t.Fatalf("peak in flight %d, want 16", peak.Load())
	}
}

// A failing bucket is tried once more after each quick wait, on the pass's
// clock, and reports its last error; a healthy one is committed once.
func TestPassQuickRetriesOnTheClock(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	start := clk.Now()
	var mu sync.Mutex
	tries := map[int][]time.Duration{}
	boom := errors.New("owner down")
	done := make(chan []error)
	go func() {
		done <- Pass{Quick: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, Clock: clk}.Commit(
			context.Background(), 2, func(_ context.Context, i int) error {
				mu.Lock()
				tries[i] = append(tries[i], clk.Now().Sub(start))
				mu.Unlock()
				if i == 1 {
					return boom
				}
				return nil
			})
	}()
	for _, step := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		if !clk.BlockUntil(1, 5*time.Second) {
			t.Fatal("the failing bucket never waited on the clock")
		}
		clk.Advance(step)
	}
	errs := <-done
	if errs[0] != nil || !errors.Is(errs[1], boom) {
		t.Fatalf("errors %v", errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tries[0]) != 1 {
		t.Fatalf("healthy bucket tried %d times", len(tries[0]))
	}
	want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}
	if len(tries[1]) != len(want) {
		t.Fatalf("failing bucket tried at %v, want %v", tries[1], want)
	}
	for i := range want {
		if tries[1][i] != want[i] {
			t.Fatalf("failing bucket tried at %v, want %v", tries[1], want)
		}
	}
}

// A pass whose context ends stops retrying and keeps the last error.
func TestPassStopsRetryingWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	clk := clock.NewFake(time.Time{})
	var tries atomic.Int32
	done := make(chan []error)
	go func() {
		done <- Pass{Quick: []time.Duration{time.Hour}, Clock: clk}.Commit(ctx, 1, func(context.Context, int) error {
			tries.Add(1)
			return errors.New("refused")
		})
	}()
	if !clk.BlockUntil(1, 5*time.Second) {
		t.Fatal("never waited")
	}
	cancel()
	if errs := <-done; errs[0] == nil || tries.Load() != 1 {
		t.Fatalf("errors %v after %d tries", errs, tries.Load())
	}
}
