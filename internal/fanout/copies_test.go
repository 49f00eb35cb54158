package fanout

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A follower's copy of a leader's cursor file is written only for a child
// attached at that epoch, never moves back, is never written under a
// running cursor, and is where a cursor started here later resumes (same
// epoch: no anchor at the attach point).
func TestCursorCopyIsWrittenForTheCurrentLinkAndResumedFrom(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	link := n.attach("src", "dst", 0) // attach point 0; no Tick: no cursor runs yet
	n.commit("src", 0, "a", "b", "c", "d", "e", "f")
	path := filepath.Join(n.dir, "topics", "src", "p00000", CursorFileName("dst"))
	write := func(c CursorCopy) bool {
		t.Helper()
		ok, err := n.e.WriteCursorCopy("src", 0, c)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if write(CursorCopy{Child: "dst", Epoch: "0123456789abcdef", NextOffset: 5}) {
		t.Fatal("a copy of another attach epoch was written")
	}
	if write(CursorCopy{Child: "src", Epoch: link.AttachEpoch, NextOffset: 5}) {
		t.Fatal("a copy for a topic that is not a child of src was written")
	}
	if _, ok, _ := ReadCursorFile(path); ok {
		t.Fatal("a refused copy left a file")
	}
	if !write(CursorCopy{Child: "dst", Epoch: link.AttachEpoch, NextOffset: 5}) {
		t.Fatal("the current link's copy was not written")
	}
	if write(CursorCopy{Child: "dst", Epoch: link.AttachEpoch, NextOffset: 3}) {
		t.Fatal("a copy moved the file back")
	}
	got, err := n.e.CursorCopies("src", 0)
	if want := []CursorCopy{{Child: "dst", Epoch: link.AttachEpoch, NextOffset: 5}}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("CursorCopies = %v, %v; want %v", got, err, want)
	}

	// This node now runs the cursor: it resumes from the copy, so only
	// record 5 reaches the child, not the six from the attach point.
	waitFor(t, 10*time.Second, "the cursor copying from the copied position", func() bool {
		n.e.Tick()
		st, _, _ := ReadCursorFile(path)
		return st.NextOffset == 6
	})
	if got := n.total("dst", 1); got != 1 {
		t.Fatalf("child holds %d records after resuming from the copy at 5, want 1", got)
	}
	if write(CursorCopy{Child: "dst", Epoch: link.AttachEpoch, NextOffset: 9}) {
		t.Fatal("a copy was written under a running cursor")
	}
	if st, _, _ := ReadCursorFile(path); st.NextOffset != 6 {
		t.Fatalf("the running cursor's file says %d, want its own 6", st.NextOffset)
	}
}
