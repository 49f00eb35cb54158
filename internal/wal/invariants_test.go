package wal

import (
	"fmt"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/testutil"
)

// Each invariant invariants.go checks fires on a state that breaks it.
// Outside race builds the checks compile away, and these tests are
// skipped. The syncer's checks (a published batch, a new segment) run on
// its own goroutine, where a panic ends the process: they are driven
// directly with the state a bug would leave; the checkpoint's deletion is
// driven through SetCheckpoint.

func wantErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want %q", what, err, want)
	}
}

// A published batch continues the seqs: no gap, no repeat, in the segment
// that ended just before it; the segment grows and its index increases.
func TestInvariantPublishedSeqsContiguous(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	seg := func() *segment {
		s := newSegment("wal", 10)
		s.last, s.durable = 14, 500
		s.index = []indexEntry{{10, 0}}
		return s
	}
	publish := func(s *segment, b *batch, prevLast uint64) error {
		segLast, prevDurable := s.last, s.durable
		s.noteBoundary(b.first, s.index[len(s.index)-1].off+indexEveryBytes)
		s.durable, s.last = s.durable+100, b.last
		return publishInvariants(s, b, prevLast, segLast, prevDurable)
	}
	if err := publish(seg(), &batch{first: 15, last: 17}, 14); err != nil {
		t.Fatalf("a batch that continues the log: %v", err)
	}
	wantErr(t, "a gap", publish(seg(), &batch{first: 16, last: 17}, 14), "batch 16..17 published after durable seq 14")
	wantErr(t, "a repeat", publish(seg(), &batch{first: 14, last: 17}, 13), "written to wal/00000000000000000010.wal, whose last seq was 14")
	wantErr(t, "an empty batch", publish(seg(), &batch{first: 15, last: 14}, 14), "holds no record")
	s := seg()
	wantErr(t, "no growth", publishInvariants(s, &batch{first: 15, last: 15}, 14, 14, s.durable), "did not grow: 500 after 500")
	s = seg()
	s.index = append(s.index, indexEntry{20, 1})
	wantErr(t, "index order", publish(s, &batch{first: 15, last: 15}, 14), "index of wal/00000000000000000010.wal not increasing: (seq 20, byte 1) then (seq 15")
}

// A new segment is empty and begins one past the last seq of the one
// before it.
func TestInvariantNewSegmentFollows(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	prev := newSegment("wal", 1)
	prev.last = 9
	for name, c := range map[string]struct {
		next *segment
		want string
	}{
		"follows": {newSegment("wal", 10), ""},
		"gap":     {newSegment("wal", 11), "holds 1..9, the next begins at 11"},
		"overlap": {newSegment("wal", 9), "holds 1..9, the next begins at 9"},
		"not empty": {func() *segment {
			s := newSegment("wal", 10)
			s.last = 12
			return s
		}(), "is not empty (last seq 12"},
	} {
		err := (&WAL{segs: []*segment{prev, c.next}}).segmentChecks()
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		wantErr(t, name, err, c.want)
	}
}

// The checkpoint moves only forward and never past the durable end.
func TestInvariantCheckpointWithinTheDurableEnd(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	if err := checkpointChecks(5, 11, 10); err != nil {
		t.Fatalf("checkpoint one past the durable end: %v", err)
	}
	wantErr(t, "past the end", checkpointChecks(5, 12, 10), "checkpoint 12 past the durable end: the newest durable seq is 10")
	wantErr(t, "backward", checkpointChecks(5, 4, 10), "checkpoint moved from 5 to 4, not forward")
	wantErr(t, "active deleted", deleteChecks(nil, nil, 5, 5), "would delete the active segment")
	wantErr(t, "past the checkpoint", deleteChecks(nil, []*segment{newSegment("wal", 1)}, 6, 5), "deleting below 6, past the durable checkpoint 5")
}

// A segment is deleted only when wholly below the checkpoint: a segment
// that claims a seq at or past it (its successor's first seq says it ends
// below) panics the deletion, and the WAL can still be closed.
func TestInvariantDeletionOnlyBelowTheCheckpoint(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	w := openT(t, t.TempDir(), Options{SegmentBytes: 300})
	appendRange(t, w, 0, 20, 1)
	w.mu.Lock()
	if len(w.segs) < 3 {
		w.mu.Unlock()
		t.Fatalf("%d segments, want at least 3", len(w.segs))
	}
	ck := w.segs[1].first
	w.segs[0].last = ck + 5
	w.mu.Unlock()
	got := testutil.PanicOf(func() { w.SetCheckpoint(ck) })
	if want := fmt.Sprintf("deleted while it holds seq %d, not below the checkpoint %d", ck+5, ck); !strings.Contains(got, want) ||
		!strings.Contains(got, "invariant broken") {
		t.Fatalf("SetCheckpoint(%d) over a broken segment panicked with %q, want %q", ck, got, want)
	}
}
