package history

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/testutil"
)

var t0 = time.Unix(1_800_000_000, 0)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func TestRingKeepsTheLastWindow(t *testing.T) {
	b := NewBook()
	for i := 0; i < capacity+5; i++ {
		b.Record(Reading{Topic: "orders", Gen: 1, Point: Point{At: at(10 * i), HighWatermark: uint64(i)}})
	}
	got := b.Points("orders", 1, at(10*(capacity+4)))
	if len(got) != capacity || got[0].HighWatermark != 5 || got[len(got)-1].HighWatermark != uint64(capacity+4) {
		t.Fatalf("%d points, first %d last %d; want %d, 5, %d", len(got), got[0].HighWatermark, got[len(got)-1].HighWatermark, capacity, capacity+4)
	}
	// Long after the last sample, nothing is within the window.
	if got := b.Points("orders", 1, at(10*(capacity+4)).Add(Window+time.Second)); len(got) != 0 {
		t.Fatalf("%d points older than the window", len(got))
	}
}

func TestAnotherIncarnationStartsAfresh(t *testing.T) {
	b := NewBook()
	b.Record(Reading{Topic: "orders", Gen: 1, Point: Point{At: at(0), HighWatermark: 900}})
	if got := b.Points("orders", 2, at(1)); got != nil {
		t.Fatalf("incarnation 2 sees incarnation 1's samples: %+v", got)
	}
	b.Record(Reading{Topic: "orders", Gen: 2, Point: Point{At: at(10), HighWatermark: 3}})
	if got := b.Points("orders", 2, at(11)); len(got) != 1 || got[0].HighWatermark != 3 {
		t.Fatalf("%+v", got)
	}
	b.Keep(func(string) bool { return false })
	if b.Topics() != 0 {
		t.Fatal("a deleted topic kept its ring")
	}
}

func TestSamplesRates(t *testing.T) {
	s := Samples([]Point{
		{At: at(0), HighWatermark: 10, Frontier: 0},
		{At: at(10), HighWatermark: 60, Frontier: 20},
		{At: at(20), HighWatermark: 5, Frontier: 30}, // went backwards
		{At: at(30), HighWatermark: 25, Frontier: 30, Partial: true},
	})
	if s[0].ProducePerS != nil {
		t.Error("a rate for the first sample")
	}
	if *s[1].ProducePerS != 5 || *s[1].ConsumePerS != 2 {
		t.Errorf("rates %v %v, want 5 and 2", *s[1].ProducePerS, *s[1].ConsumePerS)
	}
	if s[2].ProducePerS != nil || *s[2].ConsumePerS != 1 {
		t.Errorf("a backwards high watermark got a rate: %+v", s[2])
	}
	if s[3].ProducePerS != nil || s[3].ConsumePerS != nil {
		t.Errorf("a partial sample got a rate: %+v", s[3])
	}
}

func TestRunSamplesEveryTick(t *testing.T) {
	clk := clock.NewFake(t0)
	b := NewBook()
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan struct{}, 10)
	done := make(chan struct{})
	go func() {
		b.Run(ctx, clk, func(context.Context) []Reading {
			calls <- struct{}{}
			return []Reading{{Topic: "orders", Gen: 1, Point: Point{At: clk.Now()}}}
		}, func(string) bool { return true })
		close(done)
	}()
	<-calls // at once
	if !clk.BlockUntil(1, 5*time.Second) {
		t.Fatal("Run does not wait on its ticker")
	}
	clk.Advance(Every)
	<-calls
	cancel()
	<-done
	if got := b.Points("orders", 1, clk.Now()); len(got) < 2 {
		t.Fatalf("%d points after two ticks", len(got))
	}
}

// A topic created while the node samples takes a burst before its first
// sample: the rates from its creation (zero figures) to that sample show
// every record of it, produced and consumed. A topic that existed before
// sampling started gets no such start: its first sample has no rate.
func TestABurstBeforeTheFirstSampleHasItsRates(t *testing.T) {
	clk := clock.NewFake(at(0))
	b := NewBook()
	ctx, cancel := context.WithCancel(context.Background())
	readings := make(chan []Reading)
	done := make(chan struct{})
	go func() {
		b.Run(ctx, clk, func(context.Context) []Reading { return <-readings }, func(string) bool { return true })
		close(done)
	}()
	defer func() { cancel(); close(readings); <-done }()
	readings <- []Reading{{Topic: "old", Gen: 1, Born: at(-60), Point: Point{At: at(0), HighWatermark: 500}}}
	if !clk.BlockUntil(1, 5*time.Second) {
		t.Fatal("Run does not wait on its ticker")
	}
	clk.Advance(Every)
	// "burst" was created at 3 s; 200 produced and 50 consumed before the
	// sample at 10 s.
	readings <- []Reading{
		{Topic: "burst", Gen: 7, Born: at(3), Point: Point{At: at(10), HighWatermark: 200, Frontier: 50, Backlog: 150}},
		{Topic: "old", Gen: 1, Born: at(-60), Point: Point{At: at(10), HighWatermark: 500}},
	}
	// The ticker counts as a waiter while Run still records what it read:
	// wait for the record itself.
	testutil.WaitFor(t, "the second pass recorded", func() bool {
		return len(b.Points("old", 1, at(10))) == 2 && len(b.Points("burst", 7, at(10))) > 0
	})

	s := Samples(b.Points("burst", 7, at(10)))
	var produced, consumed, peak float64
	for i := 1; i < len(s); i++ {
		secs := float64(s[i].AtMs-s[i-1].AtMs) / 1000
		if s[i].ProducePerS != nil {
			produced += *s[i].ProducePerS * secs
			peak = max(peak, *s[i].ProducePerS)
		}
		if s[i].ConsumePerS != nil {
			consumed += *s[i].ConsumePerS * secs
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(produced, 200) || !near(consumed, 50) || !near(peak, 200.0/7) {
		t.Errorf("the rates account for %v produced and %v consumed, peak %v/s; want 200, 50, %v/s (samples %+v)", produced, consumed, peak, 200.0/7, s)
	}
	if old := Samples(b.Points("old", 1, at(10))); len(old) != 2 || old[0].ProducePerS != nil || *old[1].ProducePerS != 0 {
		t.Errorf("a topic born before sampling started: %+v", old)
	}
}
