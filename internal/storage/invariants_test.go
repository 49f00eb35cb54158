package storage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/testutil"
)

// Each invariant invariants.go checks fires: the log's state is broken by
// hand (a state no sequence of calls produces), the next step that checks
// it panics naming the invariant and its values, and the log can still be
// closed. Outside race builds the checks compile away, and these tests
// are skipped.

func expectPanic(t *testing.T, step string, f func(), want string) {
	t.Helper()
	got := testutil.PanicOf(f)
	if !strings.Contains(got, want) || !strings.Contains(got, "invariant broken") {
		t.Fatalf("%s on a broken log panicked with %q, want the invariant named (%q)", step, got, want)
	}
}

// heldTwoSegments is a held log of two segments: records 0..3 in the
// first, 4..5 in the second, all appended and 0..2 released.
func heldTwoSegments(t *testing.T) *Log {
	t.Helper()
	l := openT(t, t.TempDir(), Options{Held: true, SegmentBytes: 200})
	for i := uint64(0); i < 3; i++ {
		if err := l.Append(leaderRecs(i*2, int64(i), int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.segs) < 2 {
		t.Fatalf("%d segments, want at least 2", len(l.segs))
	}
	if err := l.Release(3); err != nil {
		t.Fatal(err)
	}
	return l
}

// Every step that moves the log's state checks the invariants every step
// keeps; Release is the simplest such step.
func TestInvariantsOfEveryStepFire(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	for name, c := range map[string]struct {
		brk  func(l *Log)
		want string
	}{
		"hwm past end":        {func(l *Log) { l.hwm = l.end + 4 }, "high watermark 10 past the log end 6"},
		"flushed past end":    {func(l *Log) { l.flushed.Store(l.end + 1) }, "flushed high watermark 7 past the log end 6"},
		"active segment end":  {func(l *Log) { l.segs[len(l.segs)-1].end = 5 }, "ends at 5, the log at 6"},
		"oldest":              {func(l *Log) { l.oldest = 1 }, "oldest offset 1 is not the first segment's base 0"},
		"segments contiguous": {func(l *Log) { l.segs[len(l.segs)-2].end-- }, "segment base offsets not increasing and contiguous"},
	} {
		t.Run(name, func(t *testing.T) {
			l := heldTwoSegments(t)
			l.mu.Lock()
			c.brk(l)
			l.mu.Unlock()
			expectPanic(t, "Release", func() { l.Release(4) }, c.want)
			l.Close()
		})
	}
}

// A log that is not held has its high watermark at its end; a roll checks
// it.
func TestInvariantHWMIsTheEndWhenNotHeld(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	l := openT(t, t.TempDir(), Options{SegmentBytes: 200})
	commitT(t, l, recs("a", 1, false))
	l.mu.Lock()
	l.hwm = 0
	l.mu.Unlock()
	big := []Record{{Payload: make([]byte, 300)}} // does not fit beside the first: a roll
	expectPanic(t, "Commit", func() { l.Commit(big) }, "high watermark 0 is not the log end 1 on a log that is not held")
	l.Close()
}

// A commit continues the log where its active segment ends.
func TestInvariantCommitContinuesTheSegment(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	l := openT(t, t.TempDir(), Options{})
	commitT(t, l, recs("a", 3, false))
	l.mu.Lock()
	l.end, l.hwm = 10, 10
	l.mu.Unlock()
	expectPanic(t, "Commit", func() { l.Commit(recs("b", 1, false)) }, "offsets not contiguous: the log ended at 10, its active segment at 3")
	l.Close()
}

// A commit never moves the high watermark backward.
func TestInvariantCommitNeverMovesTheHWMBackward(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	l := openT(t, t.TempDir(), Options{})
	commitT(t, l, recs("a", 3, false))
	l.mu.Lock()
	l.hwm = 9 // readers were shown records the log does not hold
	l.mu.Unlock()
	expectPanic(t, "Commit", func() { l.Commit(recs("b", 1, false)) }, "commit moved the high watermark backward from 9 to 4")
	l.Close()
}

// The index entries a commit adds increase in offset and position.
func TestInvariantIndexEntriesIncrease(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	l := openT(t, t.TempDir(), Options{})
	commitT(t, l, []Record{{Payload: make([]byte, 5000)}})
	a := l.segs[0]
	a.mu.Lock()
	a.idx[len(a.idx)-1].offset = 7 // the frame at byte 0 holds offset 0
	a.mu.Unlock()
	// The next frame starts past indexInterval: the commit indexes it.
	expectPanic(t, "Commit", func() { l.Commit([]Record{{Payload: make([]byte, 10)}}) },
		"not increasing: (offset 7, byte 0) then (offset 1, byte")
	l.Close()
}

// The checks of a commit that its own code keeps by construction (each
// batch where the one before ended, commit times never decreasing, the
// newest index entry inside the segment): driven directly with a commit
// that breaks them.
func TestInvariantCommitChecksDirect(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	l := openT(t, t.TempDir(), Options{})
	defer l.Close()
	commitT(t, l, recs("a", 3, false)) // end 3, floor = now
	two := func(base2 uint64) []*commitReq {
		return []*commitReq{{base: 3, recs: recs("b", 2, false)}, {base: base2, recs: recs("c", 1, false)}}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.commitInvariants(3, 3, 3, 1, two(5), []int64{l.floor, l.floor}); err != nil {
		t.Fatalf("a commit that keeps every invariant: %v", err)
	}
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"batches contiguous": {l.commitInvariants(3, 3, 3, 1, two(6), []int64{l.floor, l.floor}),
			"batch 1 of the commit begins at 6, the one before ended at 5"},
		"commit times": {l.commitInvariants(3, 3, 3, 1, two(5), []int64{l.floor, l.floor - 1}),
			fmt.Sprintf("commit time decreases: batch 1 stamped %d after %d", l.floor-1, l.floor)},
		"below the floor": {l.commitInvariants(3, 3, 3, 1, two(5), []int64{l.floor - 5, l.floor}),
			"commit time decreases: batch 0"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, c.err, c.want)
		}
	}
	s := l.segs[0]
	s.mu.Lock()
	s.idx = append(s.idx, indexEntry{offset: s.end, pos: s.size + 1})
	s.mu.Unlock()
	if err := indexChecks(s, 1); err == nil || !strings.Contains(err.Error(), "past its end") {
		t.Errorf("an index entry past the segment: %v", err)
	}
}

// A truncation checks the whole segment list, not only its newest two.
func TestInvariantTruncationChecksEverySegment(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	l := openT(t, t.TempDir(), Options{Held: true, SegmentBytes: 200})
	for i := uint64(0); i < 5; i++ {
		if err := l.Append(leaderRecs(i*2, int64(i), int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.segs) < 3 {
		t.Fatalf("%d segments, want at least 3", len(l.segs))
	}
	l.mu.Lock()
	l.segs[0].end--
	l.mu.Unlock()
	expectPanic(t, "TruncateTo", func() { l.TruncateTo(l.End() - 1) }, "segment base offsets not increasing and contiguous")
	l.Close()
}
