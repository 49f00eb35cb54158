package fanout

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/meta"
)

// Where a cursor without a file of its epoch starts (rule: start at the
// attach point), and that the anchor it then writes waits for the leader's
// word (rule: anchor on the leader's word).

func (n *node) cursorPath(parent, child string, p int) string {
	dir, err := n.b.Partitions().Dir(parent, p)
	if err != nil {
		n.t.Fatal(err)
	}
	return filepath.Join(dir, CursorFileName(child))
}

func (n *node) cursorAt(parent, child string, p int, epoch string, next uint64) func() bool {
	return func() bool {
		st, ok, err := ReadCursorFile(n.cursorPath(parent, child, p))
		return err == nil && ok && st.Epoch == epoch && st.NextOffset == next
	}
}

// rule anchor on the leader's word: a cursor anchors only once the leader
// confirms the link's epoch is current. While the leader says the epoch is
// not current, that the child is gone, or cannot be asked, the cursor
// writes no file and copies nothing, and the reconciler asks again on later
// ticks; once confirmed, it anchors at the attach point and copies from
// there.
func TestAnchorWaitsForTheLeadersWord(t *testing.T) {
	for _, tc := range []struct {
		name            string
		exists, current bool
		err             error
	}{
		{"epoch not current", true, false, nil},
		{"child gone", false, false, nil},
		{"leader unreachable", false, false, errors.New("no leader")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t, Config{})
			n.createTopic("src", 1, 0)
			n.createTopic("dst", 1, 0)
			n.commit("src", 0, "before")
			child := n.attach("src", "dst", 0)
			var asked atomic.Int32
			n.ms.set(func(s *seamMeta) {
				s.confirm = func(name, epoch string) (bool, bool, error) {
					asked.Add(1)
					return tc.exists, tc.current, tc.err
				}
			})
			n.commit("src", 0, "a")
			n.e.Start()
			waitFor(t, 10*time.Second, "the anchor asked and deferred several times", func() bool { return asked.Load() >= 3 })
			if _, err := os.Stat(n.cursorPath("src", "dst", 0)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a cursor file without the leader's confirmation: %v", err)
			}
			if got := n.total("dst", 1); got != 0 {
				t.Fatalf("copied %d records without an anchored cursor", got)
			}
			n.ms.set(func(s *seamMeta) { s.confirm = nil })
			waitFor(t, 10*time.Second, "the anchor at the attach point, then a's copy", n.cursorAt("src", "dst", 0, child.AttachEpoch, 2))
			if got := n.total("dst", 1); got != 1 {
				t.Fatalf("the child holds %d records, want a alone", got)
			}
		})
	}
}

// rule start at the attach point, row 2: a parent partition added after the
// attach has no history to skip: its cursor starts at 0, so records
// produced to it before its cursor ran are copied.
func TestPartitionAddedAfterTheAttachStartsAtZero(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 2, 0)
	n.commit("src", 0, "before")
	if offs := n.attach("src", "dst", 0).AttachOffsets; len(offs) != 1 || offs[0] != 1 {
		t.Fatalf("attach offsets %v, want [1]", offs)
	}
	two := 2
	if _, err := n.b.AlterTopic(n.ctx(), "src", broker.AlterTopicRequest{Partitions: &two}); err != nil {
		t.Fatal(err)
	}
	n.commit("src", 1, "x", "y") // before p1's cursor exists
	n.e.Start()
	waitFor(t, 10*time.Second, "p1's records from offset 0", func() bool { return n.total("dst", 2) == 2 })
}

// rule start at the attach point, row 3: a child record from before attach
// points existed starts at the live tail at the cursor's first read (the
// older behaviour), not at 0: nothing from before the cursor's start is
// backfilled.
func TestRecordWithoutAttachOffsetsStartsAtTheLiveTail(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	n.commit("src", 0, "old-1", "old-2", "old-3")
	epoch := NewEpoch()
	if err := n.meta.Attach(n.ctx(), "dst", meta.AttachSpec{Parent: "src", Epoch: epoch}); err != nil {
		t.Fatal(err)
	}
	if c, _ := n.meta.Topic("dst"); len(c.AttachOffsets) != 0 {
		t.Fatalf("attach offsets %v, want none (an older record)", c.AttachOffsets)
	}
	n.e.Start()
	waitFor(t, 10*time.Second, "the anchor at the live tail", n.cursorAt("src", "dst", 0, epoch, 3))
	n.commit("src", 0, "new")
	waitFor(t, 10*time.Second, "the new record copied", n.cursorAt("src", "dst", 0, epoch, 4))
	if recs := n.read("dst", 0); len(recs) != 1 || string(recs[0].Key) != "new" {
		t.Fatalf("the child holds %d records, want the new one alone", len(recs))
	}
}

// rules cursor file, start at the attach point: a corrupt cursor file is no
// position: the cursor replays from the attach point (duplicates, never a
// skip to the tail).
func TestCorruptCursorFileReplaysFromTheAttachPoint(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	n.commit("src", 0, "before", "before")
	child := n.attach("src", "dst", 0)
	n.e.Start()
	n.commit("src", 0, "a", "b")
	waitFor(t, 10*time.Second, "a and b copied", n.cursorAt("src", "dst", 0, child.AttachEpoch, 4))
	n.e.Close()
	path := n.cursorPath("src", "dst", 0)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[20] ^= 0xff // the crc no longer matches
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadCursorFile(path); !errors.Is(err, ErrCursorCorrupt) {
		t.Fatalf("the damaged file reads as %v, want corrupt", err)
	}
	n.e = n.newEngine(n.e.cfg)
	n.e.Start()
	waitFor(t, 10*time.Second, "a and b copied again from the attach point", func() bool {
		return n.cursorAt("src", "dst", 0, child.AttachEpoch, 4)() && n.total("dst", 1) == 4
	})
}
