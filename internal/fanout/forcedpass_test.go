package fanout

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/storage"
)

// rules skip unchanged ticks, leader-confirmed sweep: every condition that
// forces a full reconcile pass, each alone (the metadata version does not
// move), on a fake clock the test ticks by hand (the engine is not started:
// Tick is the reconciler's whole tick).

func tickNode(t *testing.T) (*node, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Now())
	n := newNodeAsConfigured(t, Config{Clock: clk})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	return n, clk
}

// tick runs one reconcile tick and reports whether it was a full pass.
func (n *node) tick() bool {
	before := n.e.Passes()
	n.e.Tick()
	return n.e.Passes() == before+1
}

// settle ticks until a tick skips: the state every case starts from.
func (n *node) settle(t *testing.T) {
	t.Helper()
	for i := 0; i < 5; i++ {
		if !n.tick() {
			return
		}
	}
	t.Fatal("unchanged metadata never let a tick skip its pass")
}

// rule skip unchanged ticks: at least every 30 s, a full pass even though
// nothing changed.
func TestForcedPassEvery30s(t *testing.T) {
	n, clk := tickNode(t)
	n.settle(t)
	clk.Advance(10 * time.Second)
	if n.tick() {
		t.Fatal("a pass 10 s after the last one, with nothing changed")
	}
	clk.Advance(20*time.Second - time.Millisecond)
	if n.tick() {
		t.Fatal("a pass before 30 s had gone by")
	}
	clk.Advance(time.Millisecond)
	if !n.tick() {
		t.Fatal("no full pass 30 s after the last one")
	}
	if n.tick() {
		t.Fatal("the forced pass did not restart the 30 s")
	}
}

// rule skip unchanged ticks: a pass that could not read a partition's owner
// failed; the next tick runs a full pass again. (The parent partition is
// another node's, so no cursor starts or stops here to force passes of its
// own.)
func TestForcedPassAfterOwnershipUnreadable(t *testing.T) {
	n, _ := tickNode(t)
	n.attach("src", "dst", 0)
	elsewhere := func(string, int) (string, bool) { return "n2", true }
	n.ms.set(func(s *seamMeta) { s.owner = elsewhere })
	n.settle(t)
	n.ms.set(func(s *seamMeta) { s.owner = func(string, int) (string, bool) { return "", false } })
	clk := n.e.clk.(*clock.Fake)
	clk.Advance(30 * time.Second) // one forced pass, which now fails
	if !n.tick() {
		t.Fatal("no forced pass at 30 s")
	}
	if !n.tick() {
		t.Fatal("the tick after a failed pass skipped")
	}
	n.ms.set(func(s *seamMeta) { s.owner = elsewhere })
	if !n.tick() {
		t.Fatal("the tick after a second failed pass skipped")
	}
	if n.tick() {
		t.Fatal("a clean pass did not end the forcing")
	}
}

// rule skip unchanged ticks: a pass that leaves a stopped cursor still
// draining (its commit has not returned) left work behind; the next tick
// runs a full pass again.
func TestForcedPassWhileACursorDrains(t *testing.T) {
	n, clk := tickNode(t)
	n.attach("src", "dst", 0)
	var once sync.Once
	inCommit, release := make(chan struct{}), make(chan struct{})
	n.fc.onTry = func(string, int, []storage.Record) {
		once.Do(func() { close(inCommit) })
		<-release // deaf to its context: the cursor cannot stop yet
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	n.commit("src", 0, "a")
	n.tick() // starts the cursor
	drive(t, clk, 1, 5*time.Millisecond, "the cursor in its commit", func() bool {
		select {
		case <-inCommit:
			return true
		default:
			return false
		}
	})
	if err := n.e.Detach(n.ctx(), "src", "dst"); err != nil {
		t.Fatal(err)
	}
	if !n.tick() {
		t.Fatal("the detach did not force a pass")
	}
	for i := 0; i < 3; i++ {
		if !n.tick() {
			t.Fatal("a tick skipped while the stopped cursor was still draining")
		}
	}
	close(release)
	waitFor(t, 10*time.Second, "the drained cursor gone", func() bool {
		n.tick()
		n.e.mu.Lock()
		defer n.e.mu.Unlock()
		return len(n.e.running) == 0
	})
	n.settle(t)
}

// rule skip unchanged ticks: the first tick after the replica caught up
// again runs a full pass.
func TestForcedPassWhenTheReplicaCatchesUp(t *testing.T) {
	n, _ := tickNode(t)
	n.settle(t)
	caught := true
	var mu sync.Mutex
	n.ms.set(func(s *seamMeta) {
		s.caughtUp = func() bool { mu.Lock(); defer mu.Unlock(); return caught }
	})
	mu.Lock()
	caught = false
	mu.Unlock()
	if n.tick() {
		t.Fatal("a pass while the replica lags, with nothing changed")
	}
	mu.Lock()
	caught = true
	mu.Unlock()
	if !n.tick() {
		t.Fatal("no full pass on the first tick after catching up")
	}
	if n.tick() {
		t.Fatal("the catch-up forced more than one pass")
	}
}

// rules leader-confirmed sweep, skip unchanged ticks: the orphan sweep runs
// on every 30th caught-up tick (skipped ticks count), and that tick is
// always a full pass: a cursor file of no current link survives 29 ticks
// and is gone after the 30th.
func TestOrphanSweepOnEvery30thTick(t *testing.T) {
	n, _ := tickNode(t)
	dir := filepath.Join(n.dir, "topics", "src", "p00000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(dir, CursorFileName("ghost")) // no such child
	if err := WriteCursorFileAtomic(nil, orphan, "00000000000000aa", 7); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 30; i++ {
		n.tick()
		if _, err := os.Stat(orphan); err != nil {
			t.Fatalf("the orphan went on tick %d: %v", i, err)
		}
	}
	if !n.tick() {
		t.Fatal("the 30th tick, a sweep tick, was not a full pass")
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("the orphan survived the sweep tick: %v", err)
	}
}
