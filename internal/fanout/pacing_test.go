package fanout

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/storage"
)

// The engine's constants, each asserted where the engine uses it:
// these nodes take the engine's own defaults (newNodeAsConfigured), and
// time is a clock.Fake the test steps.

// commitSizes records the record count of every child commit, in order.
func commitSizes(n *node) func() []int {
	var mu sync.Mutex
	var sizes []int
	n.fc.onTry = func(_ string, _ int, recs []storage.Record) {
		mu.Lock()
		sizes = append(sizes, len(recs))
		mu.Unlock()
	}
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), sizes...)
	}
}

// rule slab pacing: a slab holds at most 4,096 records.
func TestSlabCapsAt4096Records(t *testing.T) {
	n := newNodeAsConfigured(t, Config{})
	n.link(1, 1)
	recs := make([]storage.Record, 5000)
	for i := range recs {
		recs[i].Payload = []byte("x")
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, recs); err != nil {
		t.Fatal(err)
	}
	sizes := commitSizes(n)
	n.e.Start()
	waitFor(t, 10*time.Second, "all 5,000 copied", func() bool { return n.total("dst", 1) == 5000 })
	if got := sizes(); len(got) != 2 || got[0] != 4096 || got[1] != 904 {
		t.Fatalf("child commits of %v records, want [4096 904]", got)
	}
}

// rule slab pacing: a slab holds at most 4 MiB of keys and payloads.
func TestSlabCapsAt4MiB(t *testing.T) {
	n := newNodeAsConfigured(t, Config{})
	n.link(1, 1)
	recs := make([]storage.Record, 6)
	for i := range recs {
		recs[i].Payload = bytes.Repeat([]byte{'a' + byte(i)}, 1<<20)
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, recs); err != nil {
		t.Fatal(err)
	}
	sizes := commitSizes(n)
	n.e.Start()
	waitFor(t, 10*time.Second, "all 6 copied", func() bool { return n.total("dst", 1) == 6 })
	if got := sizes(); len(got) != 2 || got[0] != 4 || got[1] != 2 {
		t.Fatalf("child commits of %v records of 1 MiB, want [4 2]", got)
	}
}

// startOnFake runs n's engine on a fake clock with the default intervals
// (the reconciler ticks every second of fake time) and waits until it is
// parked: the ticker and one timer per running cursor.
func startOnFake(t *testing.T, n *node, cursors int) *clock.Fake {
	t.Helper()
	clk := clock.NewFake(time.Now())
	n.e = n.newEngine(withClock(n.e.cfg, clk))
	n.e.Start()
	parked(t, clk, 1+cursors)
	return clk
}

// rule slab pacing: a partial slab ships once the 25 ms linger is over, not
// before.
func TestPartialSlabLingers25ms(t *testing.T) {
	n := newNodeAsConfigured(t, Config{})
	n.link(1, 1)
	l, err := n.b.Partitions().Get("src", 0)
	if err != nil {
		t.Fatal(err)
	}
	clk := startOnFake(t, n, 1) // the cursor long-polls the open, empty parent
	r0 := l.Reads()
	n.commit("src", 0, "a")
	waitFor(t, 10*time.Second, "the cursor reading the record", func() bool { return l.Reads() > r0 })
	parked(t, clk, 2) // lingering
	clk.Advance(24 * time.Millisecond)
	parked(t, clk, 2)
	if got := n.total("dst", 1); got != 0 {
		t.Fatalf("the record shipped %v into a 25 ms linger", 24*time.Millisecond)
	}
	clk.Advance(time.Millisecond)
	waitFor(t, 10*time.Second, "the record shipped at 25 ms", func() bool { return n.total("dst", 1) == 1 })
}

// rule slab pacing: an empty parent is long-polled for 1 s before the
// cursor looks again.
func TestEmptyParentLongPolls1s(t *testing.T) {
	n := newNodeAsConfigured(t, Config{})
	n.link(1, 1)
	l, err := n.b.Partitions().Get("src", 0)
	if err != nil {
		t.Fatal(err)
	}
	clk := startOnFake(t, n, 1)
	r0 := l.Reads()
	clk.Advance(time.Second - time.Millisecond)
	parked(t, clk, 2)
	if l.Reads() != r0 {
		t.Fatalf("the cursor read again %d times within the 1 s long-poll", l.Reads()-r0)
	}
	clk.Advance(time.Millisecond)
	waitFor(t, 10*time.Second, "the next look after 1 s", func() bool { return l.Reads() > r0 })
}

// rule tick every second: the reconciler ticks every second: an attach is
// acted on at the next tick, not before.
func TestReconcilerTicksEverySecond(t *testing.T) {
	n := newNodeAsConfigured(t, Config{})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	clk := startOnFake(t, n, 0)
	n.attach("src", "dst", 0)
	running := func() int { n.e.mu.Lock(); defer n.e.mu.Unlock(); return len(n.e.running) }
	clk.Advance(time.Second - time.Millisecond)
	if got := running(); got != 0 {
		t.Fatalf("%d cursors before the second tick", got)
	}
	clk.Advance(time.Millisecond)
	waitFor(t, 10*time.Second, "the cursor started by the tick at 1 s", func() bool { return running() == 1 })
}

// rule retry alone: a failing bucket gets 3 quick tries, 100 ms then 200 ms
// apart; still failing, it backs off 1 s and the next round starts over.
func TestQuickTriesAndBackoff(t *testing.T) {
	n := newNodeAsConfigured(t, Config{})
	n.link(1, 1)
	n.fc.set("dst/0", true)
	n.commit("src", 0, "a")
	var (
		mu    sync.Mutex
		clk   *clock.Fake
		tries []time.Time
	)
	n.fc.onTry = func(string, int, []storage.Record) {
		mu.Lock()
		tries = append(tries, clk.Now())
		mu.Unlock()
	}
	clk = clock.NewFake(time.Now())
	n.e = n.newEngine(withClock(n.e.cfg, clk))
	n.e.Start()
	got := func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		var out []time.Duration
		for _, at := range tries {
			out = append(out, at.Sub(tries[0]))
		}
		return out
	}
	drive(t, clk, 2, 5*time.Millisecond, "two rounds of tries", func() bool { return len(got()) >= 6 })
	want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond,
		1300 * time.Millisecond, 1400 * time.Millisecond, 1600 * time.Millisecond}
	if g := got()[:6]; fmt.Sprint(g) != fmt.Sprint(want) {
		t.Fatalf("tries at %v, want %v", g, want)
	}
}

// rule 16 commits in flight: at most 16 child-partition commits of a slab
// are in flight at once.
func TestSixteenCommitsInFlight(t *testing.T) {
	n := newNodeAsConfigured(t, Config{})
	n.link(1, 20)
	var inFlight atomic.Int32
	release := make(chan struct{})
	n.fc.onTry = func(string, int, []storage.Record) {
		inFlight.Add(1)
		<-release
		inFlight.Add(-1)
	}
	n.commit("src", 0, keysFor(20)...) // one record for each child partition
	n.e.Start()
	waitFor(t, 10*time.Second, "16 commits in flight", func() bool { return inFlight.Load() >= 16 })
	for i := 0; i < 1000; i++ { // a missing cap would start the other 4 meanwhile
		runtime.Gosched()
	}
	got := inFlight.Load()
	close(release)
	if got != 16 {
		t.Fatalf("%d commits in flight, want 16", got)
	}
	waitFor(t, 10*time.Second, "all 20 copied", func() bool { return n.total("dst", 20) == 20 })
}
