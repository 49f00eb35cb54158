package route

import (
	"context"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// Pass is one bounded-parallel pass over buckets, the mechanism produce
// dispatch and fan-out share: each bucket is committed at most Parallel at
// once, and a bucket whose commit fails is tried again after each of
// Quick's waits. What a failure means (discard, reroute, stall, retry
// later, stop) is the caller's: Pass only reports each bucket's last
// error, so the policies stay in the callers' packages.
type Pass struct {
	// Parallel bounds the commits in flight; 0 or less: all at once.
	Parallel int
	// Quick are the waits before each retry within the pass: nil means one
	// try, {100 ms, 200 ms} three tries (fan-out's rule: retry alone).
	Quick []time.Duration
	// Clock paces the waits; nil is clock.Real.
	Clock clock.Clock
}

// Commit calls commit(ctx, i) for each bucket i in [0, n) and returns each
// bucket's last error (nil: committed). It returns once every bucket is
// settled; a bucket still waiting for a retry when ctx ends keeps its last
// error.
func (p Pass) Commit(ctx context.Context, n int, commit func(ctx context.Context, i int) error) []error {
	errs := make([]error, n)
	limit := p.Parallel
	if limit <= 0 || limit > n {
		limit = n
	}
	clk := clock.Or(p.Clock)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(limit, 1))
	for i := 0; i < n; i++ {
		sem <- struct{}{} // at most limit goroutines exist at once, not only limit commits
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			for try := 0; ; try++ {
				if errs[i] = commit(ctx, i); errs[i] == nil {
					return
				}
				if try >= len(p.Quick) || clock.Sleep(ctx, clk, p.Quick[try]) != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return errs
}
