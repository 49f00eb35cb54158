package fanout

import (
	"testing"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// rule listing opens no log: describing costs nothing. The children listing
// never opens a partition log, and a closed partition whose directory
// cannot say its tail exactly (an hwm file with no boundary, after a crash)
// is left out rather than measured; the cursor, for its part, opens such a
// partition instead of taking the directory's word that it is idle.

// inexact makes src/0's directory description what it is after a crash:
// no exact tail, and a high watermark that claims nothing was committed.
func inexact(n *node) {
	n.logs.mu.Lock()
	defer n.logs.mu.Unlock()
	n.logs.describe = func(name string, p int, st storage.Stats, err error) (storage.Stats, error) {
		if name == "src" && p == 0 && n.b.Partitions().Peek(name, p) == nil {
			return storage.Stats{Exact: false}, err
		}
		return st, err
	}
}

func TestChildrenListingNeverOpensALog(t *testing.T) {
	n := newNode(t, Config{})
	n.link(2, 2)
	n.commit("src", 0, "a", "b")
	n.commit("src", 1, "c")
	n.b.Partitions().ClosePartition("src", 0)
	n.b.Partitions().ClosePartition("src", 1)
	gets := n.logs.gets.Load()
	v, err := n.e.Children("src")
	if err != nil || len(v.Children) != 1 {
		t.Fatalf("listing: %+v %v", v, err)
	}
	if c := v.Children[0]; c.LagMessages != 3 || !c.LagComplete {
		t.Fatalf("listing of closed partitions: lag %d complete %v, want 3 and true", c.LagMessages, c.LagComplete)
	}
	if n.logs.gets.Load() != gets || n.b.Partitions().Peek("src", 0) != nil || n.b.Partitions().Peek("src", 1) != nil {
		t.Fatal("the children listing opened a partition log")
	}
}

func TestChildrenListingLeavesOutAnInexactPartition(t *testing.T) {
	n := newNode(t, Config{})
	n.link(2, 2)
	n.commit("src", 0, "a", "b")
	n.commit("src", 1, "c")
	n.b.Partitions().ClosePartition("src", 0)
	inexact(n)
	v, err := n.e.Children("src")
	if err != nil || len(v.Children) != 1 {
		t.Fatalf("listing: %+v %v", v, err)
	}
	if c := v.Children[0]; c.LagComplete || c.LagMessages != 1 {
		t.Fatalf("listing with an inexact closed partition: lag %d complete %v, want 1 (src/1 alone) and false", c.LagMessages, c.LagComplete)
	}
}

func TestCursorOpensAClosedParentWhoseDirectoryCannotSay(t *testing.T) {
	n := newNode(t, Config{})
	n.link(1, 1)
	n.commit("src", 0, "a", "b")
	n.b.Partitions().ClosePartition("src", 0)
	inexact(n)
	n.e.Start()
	waitFor(t, 10*time.Second, "both records copied", func() bool { return n.total("dst", 1) == 2 })
}
