package dispatch

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/metrics"
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
	w, err := wal.Open(t.TempDir(), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Time{})
	const took = maxRest
	sc := &slowCommitter{fakeCommitter: newFake(), clk: clk, took: took, entered: make(chan struct{}), release: make(chan struct{})}
	d := &Dispatcher{WAL: w, Commit: sc, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Clock: clk, Partitions: func(string) int { return 1 },
		Discard: func(context.Context, string, uint64) bool { return false }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done; w.Close() }()

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
	clk.Advance(took - time.Millisecond)
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("the dispatcher stopped waiting on its clock")
	}
	if got := calls(); got != 1 {
		t.Fatalf("%d commits before the pause was over, want 1 (the record accepted during the slow cycle waits for the next)", got)
	}
	clk.Advance(time.Millisecond)
	waitFor(t, "the next cycle once the pause is over", func() bool { return calls() == 2 })
	if got, _ := sc.snapshot(); len(got["t/0"]) != 2 {
		t.Fatalf("committed %v, want a and b", got["t/0"])
	}
}

// The pause is what is left of minCycle for a fast cycle, as long as the
// commit for a slow one, and never longer than maxRest.
func TestCycleRest(t *testing.T) {
	for _, c := range []struct{ took, want time.Duration }{
		{0, minCycle},
		{minCycle / 5, minCycle - minCycle/5},
		{minCycle / 2, minCycle / 2},
		{minCycle, minCycle},
		{maxRest, maxRest},
		{10 * maxRest, maxRest},
	} {
		if got := cycleRest(c.took); got != c.want {
			t.Errorf("cycleRest(%v) = %v, want %v", c.took, got, c.want)
		}
	}
}
