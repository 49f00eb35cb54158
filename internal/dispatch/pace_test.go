package dispatch

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// slowCommitter is a fakeCommitter whose first commit takes took of the
// fake clock and holds until released, standing for a contended fdatasync.
type slowCommitter struct {
	*fakeCommitter
	clk     *clock.Fake
	took    time.Duration
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (s *slowCommitter) Commit(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
	s.once.Do(func() {
		s.clk.Advance(s.took)
		close(s.entered)
		<-s.release
	})
	return s.fakeCommitter.Commit(ctx, topic, inc, p, recs)
}

// A cycle whose commit took longer than minCycle is followed by a pause as
// long as the commit, not by the next cycle at once: partition fsyncs take
// at most half of the disk's time, and the next cycle carries what arrived
// meanwhile for the same fsyncs.
func TestSlowCycleIsFollowedByAsLongAPause(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	const took = maxRest
	sc := &slowCommitter{fakeCommitter: newFake(), clk: clk, took: took, entered: make(chan struct{}), release: make(chan struct{})}
	w := runOnFakeClock(t, clk, sc, false)
	if err := w.Append(context.Background(), []wal.Record{{Topic: "t", Payload: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	<-sc.entered
	if err := w.Append(context.Background(), []wal.Record{{Topic: "t", Payload: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	close(sc.release)
	calls := func() int { _, c := sc.snapshot(); return c["t/0"] }
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("the dispatcher never paused on its clock")
	}
	expectPause(t, clk, took, calls)
	if got, _ := sc.snapshot(); len(got["t/0"]) != 2 {
		t.Fatalf("committed %v, want a and b", got["t/0"])
	}
}

// expectPause checks that a dispatcher parked on clk after its first
// commit starts the next cycle only once pause has passed: one commit
// until then, the record accepted meanwhile waiting; two after.
func expectPause(t *testing.T, clk *clock.Fake, pause time.Duration, calls func() int) {
	t.Helper()
	clk.Advance(pause - time.Millisecond)
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("the dispatcher stopped waiting on its clock")
	}
	if got := calls(); got != 1 {
		t.Fatalf("%d commits before the pause of %v was over, want 1", got, pause)
	}
	clk.Advance(time.Millisecond)
	waitFor(t, "the next cycle once the pause is over", func() bool { return calls() == 2 })
}

// The pause after a cycle that made an fdatasync is what is left of
// minCycle for a fast cycle, as long as the commit for a slow one, and
// never longer than maxRest; after a cycle that made none, as long as
// the commit, never longer than maxRest.
func TestCycleRest(t *testing.T) {
	for _, c := range []struct {
		took   time.Duration
		synced bool
		want   time.Duration
	}{
		{0, true, minCycle},
		{minCycle / 5, true, minCycle - minCycle/5},
		{minCycle / 2, true, minCycle / 2},
		{minCycle, true, minCycle},
		{maxRest, true, maxRest},
		{10 * maxRest, true, maxRest},
		{0, false, 0},
		{minCycle / 5, false, minCycle / 5},
		{minCycle, false, minCycle},
		{10 * maxRest, false, maxRest},
	} {
		if got := cycleRest(c.took, c.synced); got != c.want {
			t.Errorf("cycleRest(%v, synced %v) = %v, want %v", c.took, c.synced, got, c.want)
		}
	}
}

// lazyCommitter is a fakeCommitter that commits sourced records as a
// partition this node owns does with Lazy: without an fdatasync, handing
// back the Flusher that makes them durable.
type lazyCommitter struct {
	*fakeCommitter
	flushes atomic.Int32
}

func (c *lazyCommitter) CommitSourced(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record, src storage.Source) (storage.Flusher, error) {
	if err := c.Commit(ctx, topic, inc, p, recs); err != nil || !src.Lazy {
		return nil, err
	}
	return c, nil
}

func (c *lazyCommitter) Flush() error {
	c.flushes.Add(1)
	return nil
}

// runOnFakeClock runs a dispatcher of one-partition topics over a fresh
// WAL and commit, on clk, a fake clock that moves only when the test
// moves it.
func runOnFakeClock(t *testing.T, clk *clock.Fake, commit route.Committer, lazy bool) *wal.WAL {
	t.Helper()
	w, err := wal.Open(t.TempDir(), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := &Dispatcher{WAL: w, Commit: commit, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Clock: clk, Partitions: func(string) int { return 1 }, Lazy: lazy,
		Discard: func(context.Context, string, uint64) bool { return false }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; w.Close() })
	return w
}

// runLazy runs a Lazy dispatcher over a lazyCommitter (runOnFakeClock).
func runLazy(t *testing.T) (*wal.WAL, *lazyCommitter, *clock.Fake) {
	t.Helper()
	lc := &lazyCommitter{fakeCommitter: newFake()}
	clk := clock.NewFake(time.Time{})
	return runOnFakeClock(t, clk, lc, true), lc, clk
}

func appendOne(t *testing.T, w *wal.WAL, payload string) {
	t.Helper()
	if err := w.Append(context.Background(), []wal.Record{{Topic: "t", Payload: []byte(payload)}}); err != nil {
		t.Fatal(err)
	}
}

// A cycle whose commits were all lazy made no fdatasync, so minCycle's
// floor does not hold the next one back: a record accepted after it is
// committed without the clock moving at all.
func TestLazyCycleIsNotHeldForMinCycle(t *testing.T) {
	w, lc, _ := runLazy(t)
	calls := func() int { _, c := lc.snapshot(); return c["t/0"] }
	appendOne(t, w, "a")
	waitFor(t, "the first commit", func() bool { return calls() == 1 })
	appendOne(t, w, "b")
	waitFor(t, "the second commit with the clock standing still", func() bool { return calls() == 2 })
	if got, _ := lc.snapshot(); len(got["t/0"]) != 2 {
		t.Fatalf("committed %v, want a and b", got["t/0"])
	}
}

// Caught up, the dispatcher checkpoints (flushing every lazily committed
// partition first) on its cadence, not at once: at a trickle of records
// it is caught up after nearly every one, and a checkpoint each time
// would cost several fdatasyncs a record.
func TestCheckpointKeepsItsCadenceWhenCaughtUp(t *testing.T) {
	w, lc, clk := runLazy(t)
	calls := func() int { _, c := lc.snapshot(); return c["t/0"] }
	// The first checkpoint comes at once, none having been taken; the
	// clock then stands still until the test moves it.
	first := w.Checkpoint()
	appendOne(t, w, "a")
	waitFor(t, "the first commit and checkpoint", func() bool { return calls() == 1 && w.Checkpoint() > first })
	before, flushed := w.Checkpoint(), lc.flushes.Load()
	for i, p := range []string{"b", "c", "d"} {
		appendOne(t, w, p)
		waitFor(t, "the next commit", func() bool { return calls() == i+2 })
		if !clk.BlockUntil(1, 10*time.Second) {
			t.Fatal("the dispatcher never waited on its clock")
		}
		clk.Advance(idlePoll) // a whole idle wait with nothing new
		if !clk.BlockUntil(1, 10*time.Second) {
			t.Fatal("the dispatcher stopped waiting on its clock")
		}
	}
	if got, n := w.Checkpoint(), lc.flushes.Load(); got != before || n != flushed {
		t.Fatalf("checkpoint %d (was %d) and %d flushes (were %d) within the cadence, want neither moved", got, before, n, flushed)
	}
	clk.Advance(lazyCheckpointEvery)
	waitFor(t, "the checkpoint on the cadence", func() bool { return w.Checkpoint() > before })
	if n := lc.flushes.Load(); n != flushed+1 {
		t.Fatalf("%d flushes before the checkpoint, want %d", n, flushed+1)
	}
}

// A fast cycle that made an fdatasync (a plain commit) is still followed
// by what is left of minCycle: a record accepted meanwhile waits for it.
func TestSyncCycleRestsMinCycle(t *testing.T) {
	fc, clk := newFake(), clock.NewFake(time.Time{})
	w := runOnFakeClock(t, clk, fc, true)
	calls := func() int { _, c := fc.snapshot(); return c["t/0"] }
	appendOne(t, w, "a")
	waitFor(t, "the first commit", func() bool { return calls() == 1 })
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("the dispatcher never paused on its clock")
	}
	if at, _ := clk.Next(); at.Sub(clk.Now()) != minCycle {
		t.Fatalf("after the cycle the dispatcher waits %v, want minCycle (%v)", at.Sub(clk.Now()), minCycle)
	}
	appendOne(t, w, "b")
	expectPause(t, clk, minCycle, calls)
}
