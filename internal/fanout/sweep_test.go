package fanout

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// rule leader-confirmed sweep: the orphan sweep never removes a path a
// running cursor owns. The sweep judges an orphan file (a detached link's),
// and while the leader's confirmation is in flight the child is re-attached
// and its new cursor anchors a file at the same path. Before the fix the
// sweep then removed the new cursor's file; now it re-checks, under the
// lock a cursor takes to own its path, right before the removal, and keeps
// it. A real orphan is still removed.
func TestSweepKeepsAFileAnchoredDuringItsConfirmation(t *testing.T) {
	n := newNode(t, Config{SweepEveryTicks: 1 << 30}) // sweeps only when the test calls one
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	first := n.attach("src", "dst", 0)
	path := filepath.Join(n.dir, "topics", "src", "p00000", CursorFileName("dst"))
	epochIs := func(epoch string) func() bool {
		return func() bool {
			n.e.Tick()
			st, ok, err := ReadCursorFile(path)
			return err == nil && ok && st.Epoch == epoch
		}
	}
	waitFor(t, 10*time.Second, "the first link's file", epochIs(first.AttachEpoch))
	if err := n.e.Detach(n.ctx(), "src", "dst"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the first link's cursor gone", func() bool {
		n.e.Tick()
		n.e.mu.Lock()
		defer n.e.mu.Unlock()
		return len(n.e.running) == 0
	})

	var second string
	hooked := 0
	n.e.sweepHook = func(p string) {
		if p != path || hooked > 0 {
			return
		}
		hooked++
		// Between the leader's verdict (epoch 1 is not current) and the
		// removal: a new attach, whose cursor anchors at the same path.
		second = n.attach("src", "dst", 0).AttachEpoch
		waitFor(t, 10*time.Second, "the new link's anchor", epochIs(second))
	}
	n.e.sweepOrphans()
	if hooked != 1 {
		t.Fatalf("the sweep did not judge %s removable (hook ran %d times)", path, hooked)
	}
	st, ok, err := ReadCursorFile(path)
	if err != nil || !ok || st.Epoch != second {
		t.Fatalf("the running cursor's file after the sweep: %+v exists=%v err=%v; want epoch %s", st, ok, err, second)
	}
	n.commit("src", 0, "a")
	waitFor(t, 10*time.Second, "the new cursor advancing its file", func() bool {
		st, _, _ := ReadCursorFile(path)
		return st.Epoch == second && st.NextOffset == 1
	})

	// A real orphan still goes: detach, let the cursor stop, sweep.
	n.e.sweepHook = nil
	if err := n.e.Detach(n.ctx(), "src", "dst"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the second link's cursor gone", func() bool {
		n.e.Tick()
		n.e.mu.Lock()
		defer n.e.mu.Unlock()
		return len(n.e.running) == 0
	})
	n.e.sweepOrphans()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("orphan file still there after a sweep: %v", err)
	}
}

// rule leader-confirmed sweep: a file replaced between the leader's verdict
// and the removal by something other than a cursor (a move installing a
// copied partition, for one) is not the file the leader judged: the sweep
// keeps it for the next sweep to judge.
func TestSweepKeepsAFileReplacedDuringItsConfirmation(t *testing.T) {
	n := newNode(t, Config{SweepEveryTicks: 1 << 30})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	dir := filepath.Join(n.dir, "topics", "src", "p00000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, CursorFileName("dst"))
	if err := WriteCursorFileAtomic(nil, path, "0000000000000001", 7); err != nil { // never a current epoch
		t.Fatal(err)
	}
	n.e.sweepHook = func(string) {
		if err := WriteCursorFileAtomic(nil, path, "0000000000000002", 9); err != nil {
			t.Error(err)
		}
	}
	n.e.sweepOrphans()
	if st, ok, err := ReadCursorFile(path); err != nil || !ok || st.Epoch != "0000000000000002" {
		t.Fatalf("the replaced file after the sweep: %+v exists=%v err=%v", st, ok, err)
	}
	n.e.sweepHook = nil
	n.e.sweepOrphans()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the next sweep kept an orphan: %v", err)
	}
}

// rule leader-confirmed sweep: the sweep deletes only what the leader
// confirms belongs to no current link. A file of the current link whose
// cursor does not run here (not started yet, or owned by another node's
// cursor a moment ago), and an unreadable file of a child that still
// exists, are both kept; only the file of an epoch the leader says is not
// current goes.
func TestSweepKeepsWhatTheLeaderDoesNotDisown(t *testing.T) {
	n := newNode(t, Config{SweepEveryTicks: 1 << 30})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	n.createTopic("other", 1, 0)
	child := n.attach("src", "dst", 0)
	n.attach("src", "other", 0)
	dir := filepath.Join(n.dir, "topics", "src", "p00000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	current, unreadable := filepath.Join(dir, CursorFileName("dst")), filepath.Join(dir, CursorFileName("other"))
	if err := WriteCursorFileAtomic(nil, current, child.AttachEpoch, 3); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unreadable, []byte("not a cursor record"), 0o644); err != nil {
		t.Fatal(err)
	}
	n.e.sweepOrphans() // no cursor runs: the engine is not started
	if st, ok, err := ReadCursorFile(current); err != nil || !ok || st.Epoch != child.AttachEpoch {
		t.Fatalf("the current link's file after a sweep: %+v exists=%v err=%v", st, ok, err)
	}
	if _, err := os.Stat(unreadable); err != nil {
		t.Fatalf("an unreadable file of an existing child was removed: %v", err)
	}
	// The leader disowns dst's epoch (detached, re-attached elsewhere): now it goes.
	n.ms.set(func(s *seamMeta) {
		s.confirm = func(name, epoch string) (bool, bool, error) { return name == "other", name == "other", nil }
	})
	n.e.sweepOrphans()
	if _, err := os.Stat(current); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file the leader disowned survived the sweep: %v", err)
	}
	if _, err := os.Stat(unreadable); err != nil {
		t.Fatalf("an unreadable file of an existing child was removed: %v", err)
	}
}
