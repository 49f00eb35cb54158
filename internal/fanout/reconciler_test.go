package fanout

import (
	"fmt"
	"testing"
)

// F2, F3: with many topics and no changes, ticks skip the full pass; an
// attach or detach is acted on within one tick.
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
