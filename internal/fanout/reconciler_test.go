package fanout

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// rules tick every second, skip unchanged ticks: with many topics and no
// changes, ticks skip the full pass; an attach or detach is acted on within
// one tick.
func TestReconcilerSkipsUnchangedAndActsWithinOneTick(t *testing.T) {
	n := newNode(t, Config{})
	for i := 0; i < 200; i++ {
		n.createTopic(fmt.Sprintf("t%03d", i), 2, 0)
	}
	n.e.Tick()
	n.e.Tick()
	passes := n.e.Passes()
	for i := 0; i < 10; i++ {
		n.e.Tick()
	}
	if n.e.Passes() != passes || n.e.Skips() < 10 {
		t.Fatalf("unchanged metadata: passes %d → %d, skips %d", passes, n.e.Passes(), n.e.Skips())
	}
	n.attach("t000", "t001", 0)
	n.e.Tick()
	if n.e.Passes() != passes+1 {
		t.Fatalf("an attach did not force a pass: %d → %d", passes, n.e.Passes())
	}
	n.e.mu.Lock()
	running := len(n.e.running)
	n.e.mu.Unlock()
	if running != 2 {
		t.Fatalf("%d cursors running after the attach tick, want 2 (one per parent partition)", running)
	}
	if err := n.e.Detach(n.ctx(), "t000", "t001"); err != nil {
		t.Fatal(err)
	}
	n.e.Tick()
	n.e.mu.Lock()
	for k, c := range n.e.running {
		if !c.stopping.Load() {
			t.Errorf("cursor %v not stopped by the detach tick", k)
		}
	}
	n.e.mu.Unlock()
}

// rule skip unchanged ticks: a cursor that exits on its own is restarted by
// the next tick, even when a tick lands while it is exiting (between its
// done channel and its exit report). Before the fix the exit was reported
// first: the tick in between ran a full pass, found done still open, kept
// the dead cursor in running, came out clean — and every tick after it
// skipped.
func TestExitingCursorNotKeptByATickMidExit(t *testing.T) {
	fsys := errorfs.New(vfs.Default)
	// No forced or sweep passes: only the exit may force the next pass.
	n := newNode(t, Config{FS: fsys, ForcedPassEvery: time.Hour, SweepEveryTicks: 1 << 30})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	n.attach("src", "dst", 0)
	// The first cursor's read of its file fails: it exits on its own.
	in := fsys.Inject(errorfs.Rule{Ops: errorfs.OpOpen, Path: CursorFileName("dst"), Times: 1, Err: syscall.EIO})
	var once sync.Once
	n.e.exitHook = func(cursorKey) { once.Do(n.e.Tick) } // a tick lands mid-exit
	k := cursorKey{"src", "dst", 0}
	n.e.Tick()
	n.e.mu.Lock()
	first := n.e.running[k]
	n.e.mu.Unlock()
	if first == nil {
		t.Fatal("no cursor started")
	}
	<-first.done
	if in.Fired() != 1 {
		t.Fatalf("the injected read fault fired %d times, want 1", in.Fired())
	}
	waitFor(t, 5*time.Second, "the exited cursor replaced by the reconciler", func() bool {
		n.e.Tick()
		n.e.mu.Lock()
		defer n.e.mu.Unlock()
		c := n.e.running[k]
		return c != nil && c != first
	})
	n.commit("src", 0, "a")
	waitFor(t, 10*time.Second, "the record copied by the restarted cursor", func() bool {
		n.e.Tick()
		return n.total("dst", 1) == 1
	})
}
