package dispatch

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// A failing destination is retried once per Backoff of the dispatcher's
// clock, not sooner, however often the idle loop polls (every 10 ms of
// that clock): the pacing is the clock's, so a test steps it.
func TestFailingBucketRetriedOncePerBackoff(t *testing.T) {
	w, err := wal.Open(t.TempDir(), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Time{})
	fc := newFake()
	fc.setFailing("t/0", apierr.Unavailable(time.Second, "owner down"))
	d := &Dispatcher{WAL: w, Commit: fc, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Backoff: time.Second, Clock: clk, Partitions: func(string) int { return 1 },
		Discard: func(context.Context, string, uint64) bool { return false }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done; w.Close() }()
	if err := w.Append(context.Background(), []wal.Record{{Topic: "t", Payload: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	calls := func() int { _, c := fc.snapshot(); return c["t/0"] }
	waitFor(t, "the first try", func() bool { return calls() == 1 })
	for elapsed := time.Duration(0); elapsed < time.Second-idlePoll; elapsed += idlePoll {
		if !clk.BlockUntil(1, 10*time.Second) {
			t.Fatal("the dispatcher never waited on its clock")
		}
		clk.Advance(idlePoll)
	}
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("the dispatcher never waited on its clock")
	}
	if got := calls(); got != 1 {
		t.Fatalf("%d tries before the backoff was over, want 1", got)
	}
	clk.Advance(idlePoll)
	waitFor(t, "the retry once the backoff is over", func() bool { return calls() == 2 })
	fc.setFailing("t/0", nil)
	deadline := time.Now().Add(10 * time.Second)
	for w.Checkpoint() != w.LastSeq()+1 {
		if time.Now().After(deadline) {
			t.Fatal("the record never committed once the destination healed")
		}
		if clk.BlockUntil(1, 100*time.Millisecond) {
			clk.Advance(idlePoll)
		}
	}
}

// slowCommitter takes took of the fake clock on its first commit, during
// which one more record is accepted, and reports each commit's clock time.
type slowCommitter struct {
	clk   *clock.Fake
	w     *wal.WAL
	took  time.Duration
	calls int
	at    chan time.Time
}

func (c *slowCommitter) Commit(ctx context.Context, _ string, _ uint64, _ int, _ []storage.Record) error {
	c.calls++
	c.at <- c.clk.Now()
	if c.calls == 1 {
		if err := c.w.Append(ctx, []wal.Record{{Topic: "t", Payload: []byte("second")}}); err != nil {
			return err
		}
		c.clk.Advance(c.took)
	}
	return nil
}

// A cycle whose commits took long is followed by a pause of cycleFactor
// times its duration (capped at maxCycle), not only minCycle from its
// start: on a loaded cluster the next cycle carries the records of that
// pause for the same RPCs and fsyncs.
func TestSlowCycleSpacesTheNext(t *testing.T) {
	w, err := wal.Open(t.TempDir(), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Time{})
	took := 6 * time.Millisecond // over minCycle: the fixed spacing paused not at all
	sc := &slowCommitter{clk: clk, w: w, took: took, at: make(chan time.Time, 4)}
	d := &Dispatcher{WAL: w, Commit: sc, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Clock: clk, Partitions: func(string) int { return 1 },
		Discard: func(context.Context, string, uint64) bool { return false }}
	if err := w.Append(context.Background(), []wal.Record{{Topic: "t", Payload: []byte("first")}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done; w.Close() }()
	first := <-sc.at
	var second time.Time
	for second.IsZero() {
		select {
		case second = <-sc.at:
		default:
			if clk.BlockUntil(1, 100*time.Millisecond) {
				clk.Advance(time.Millisecond)
			}
		}
	}
	if got, want := second.Sub(first), cycleSpacing(took); got < want {
		t.Fatalf("the next cycle began %v after a cycle that took %v, want >= %v", got, took, want)
	}
	if want := cycleFactor * took; cycleSpacing(took) != want {
		t.Fatalf("cycleSpacing(%v) = %v, want %v", took, cycleSpacing(took), want)
	}
	if got := cycleSpacing(time.Hour); got != maxCycle {
		t.Fatalf("cycleSpacing(1h) = %v, want the cap %v", got, maxCycle)
	}
	if got := cycleSpacing(0); got != minCycle {
		t.Fatalf("cycleSpacing(0) = %v, want minCycle %v", got, minCycle)
	}
}
