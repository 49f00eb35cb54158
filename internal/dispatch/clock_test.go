package dispatch

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/metrics"
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
