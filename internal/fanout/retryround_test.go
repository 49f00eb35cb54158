package fanout

import (
	"fmt"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/topic"
)

// rule re-check every round: each retry round of a failing bucket re-checks
// the link's epoch and re-buckets under the child's current partition count
// — every round, not only the first. The reconciler does not tick here (a 1
// h interval on a fake clock that moves by milliseconds), so nothing but
// the cursor's own checks can stop or redirect it.

func retryNode(t *testing.T, childParts int) (*node, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Now())
	n := newNode(t, Config{Clock: clk, Reconcile: time.Hour})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", childParts, 0)
	return n, clk
}

// A detach and re-attach during the outage (a new epoch) stops the cursor
// at its next round: the held record never reaches the child, not even
// once the partition is back.
func TestEveryRetryRoundChecksTheEpoch(t *testing.T) {
	n, clk := retryNode(t, 1)
	n.attach("src", "dst", 0)
	n.fc.set("dst/0", true)
	n.e.Start()
	n.commit("src", 0, "a")
	drive(t, clk, 2, 5*time.Millisecond, "two failed rounds", func() bool { tries, _ := n.fc.count("dst/0"); return tries >= 6 })
	n.e.mu.Lock()
	c := n.e.running[cursorKey{"src", "dst", 0}]
	n.e.mu.Unlock()
	if err := n.e.Detach(n.ctx(), "src", "dst"); err != nil {
		t.Fatal(err)
	}
	n.attach("src", "dst", 0)
	n.fc.set("dst/0", false)
	drive(t, clk, 1, 5*time.Millisecond, "the cursor of the old epoch stopping", func() bool {
		select {
		case <-c.done:
			return true
		default:
			return false
		}
	})
	if _, oks := n.fc.count("dst/0"); oks != 0 || n.total("dst", 1) != 0 {
		t.Fatalf("the old epoch's held record reached the child (%d commits) after the re-attach", oks)
	}
}

// Growing the child during the outage moves the held keyed record to its
// partition under the new count, where it commits; the old partition is
// not tried again.
func TestEveryRetryRoundRebucketsUnderTheCurrentCount(t *testing.T) {
	n, clk := retryNode(t, 2)
	key := ""
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("key%d", i)
		if topic.KeyPartition([]byte(k), 2) == 1 && topic.KeyPartition([]byte(k), 4) == 3 {
			key = k
		}
	}
	n.attach("src", "dst", 0)
	n.fc.set("dst/1", true)
	n.e.Start()
	n.commit("src", 0, key)
	drive(t, clk, 2, 5*time.Millisecond, "two failed rounds on dst/1", func() bool { tries, _ := n.fc.count("dst/1"); return tries >= 6 })
	four := 4
	if _, err := n.b.AlterTopic(n.ctx(), "dst", broker.AlterTopicRequest{Partitions: &four}); err != nil {
		t.Fatal(err)
	}
	before, _ := n.fc.count("dst/1")
	drive(t, clk, 1, 5*time.Millisecond, "the record in dst/3", func() bool { return len(n.read("dst", 3)) == 1 })
	if after, _ := n.fc.count("dst/1"); after > before+len(n.e.cfg.QuickRetries)+1 {
		t.Fatalf("dst/1 tried %d more times after the growth", after-before)
	}
}
