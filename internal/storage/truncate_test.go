package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TruncateTo (truncate.go): refused below the HWM, a no-op at or past the
// end, a cut inside a frame keeps the head byte for byte, whole segments
// go, and a reopen sees what the truncation left.

func readToAll(t *testing.T, l *Log) []Record {
	t.Helper()
	got, err := l.ReadTo(l.Oldest(), 1<<20, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// cloneRecords copies records out of shared frames.
func cloneRecords(rs []Record) []Record {
	out := make([]Record, len(rs))
	for i, r := range rs {
		r.Key, r.Payload = append([]byte(nil), r.Key...), append([]byte(nil), r.Payload...)
		out[i] = r
	}
	return out
}

func TestTruncateBelowHWMRefused(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, heldOpts())
	defer l.Close()
	if err := l.Append(leaderRecs(0, 1, 2, 3, 4)); err != nil {
		t.Fatal(err)
	}
	l.Release(3)
	size := fileSize(t, filepath.Join(dir, segmentName(0)))
	if err := l.TruncateTo(2); !errors.Is(err, ErrBelowCommitted) {
		t.Fatalf("TruncateTo(2) with hwm 3: %v, want ErrBelowCommitted", err)
	}
	if l.End() != 4 || fileSize(t, filepath.Join(dir, segmentName(0))) != size {
		t.Fatalf("a refused truncation changed the log: end %d", l.End())
	}
	if err := l.TruncateTo(4); err != nil || l.End() != 4 {
		t.Fatalf("TruncateTo(end): %v, end %d; want a no-op", err, l.End())
	}
	if err := l.TruncateTo(9); err != nil || l.End() != 4 {
		t.Fatalf("TruncateTo(past end): %v, end %d; want a no-op", err, l.End())
	}
	if err := l.TruncateTo(3); err != nil || l.End() != 3 || l.HWM() != 3 {
		t.Fatalf("TruncateTo(hwm): %v, end %d, hwm %d", err, l.End(), l.HWM())
	}
}

// A cut inside a batch frame keeps its head records byte for byte — the
// frame first in its segment (replaced) and after others (a new segment
// file shadowing it) — and a reopen sees the same; the floor of commit
// times drops to the kept newest record, so the new leader's records,
// older than the cut tail's, are accepted.
func TestTruncateInsideAFrameKeepsTheHead(t *testing.T) {
	for _, c := range []struct {
		name   string
		prefix int // records appended before the cut frame
	}{
		{"frame first in its segment", 0},
		{"frame after others", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openT(t, dir, heldOpts())
			p := uint64(c.prefix)
			if p > 0 {
				if err := l.Append(leaderRecs(0, 10, 10)); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Append(leaderRecs(p, 100, 100, 200, 300, 400)); err != nil {
				t.Fatal(err)
			}
			if err := l.Append(leaderRecs(p+5, 500)); err != nil {
				t.Fatal(err)
			}
			l.Release(p + 1)
			want := cloneRecords(readToAll(t, l)[:p+3])
			if err := l.TruncateTo(p + 3); err != nil {
				t.Fatal(err)
			}
			if l.End() != p+3 || l.HWM() != p+1 {
				t.Fatalf("after the cut: end %d, hwm %d; want %d, %d", l.End(), l.HWM(), p+3, p+1)
			}
			sameRecords(t, readToAll(t, l), want)
			if _, err := os.Stat(filepath.Join(dir, segmentName(p))); err != nil {
				t.Fatalf("the kept head is not in a segment file of its own base: %v", err)
			}
			if err := l.Append(leaderRecs(p+3, 199)); !errors.Is(err, ErrAppendMismatch) {
				t.Fatalf("Append below the kept newest (200): %v", err)
			}
			next := leaderRecs(p+3, 250, 260)
			if err := l.Append(next); err != nil {
				t.Fatalf("Append older than the cut tail, newer than what is kept: %v", err)
			}
			want = append(want, next...)
			sameRecords(t, readToAll(t, l), want)
			l.Close()
			l = openT(t, dir, heldOpts())
			defer l.Close()
			if l.End() != p+5 {
				t.Fatalf("reopened end %d, want %d", l.End(), p+5)
			}
			sameRecords(t, readToAll(t, l), want)
		})
	}
}

func TestTruncateAtAFrameBoundary(t *testing.T) {
	dir := t.TempDir()
	var commitNow int64 = 1000
	l := openT(t, dir, Options{Held: true, Now: clockAt(&commitNow)})
	commitT(t, l, recs("a", 2, false))
	commitNow = 2000
	commitT(t, l, recs("b", 2, false))
	if err := l.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if got := readToAll(t, l); len(got) != 2 || string(got[1].Payload) != "a-1" {
		t.Fatalf("after the cut: %v", got)
	}
	if fileSize(t, filepath.Join(dir, segmentName(0))) != l.flushedPos {
		t.Fatal("the segment was not cut at the frame boundary")
	}
	commitNow = 1500 // a new leader's clock behind the cut tail's
	if b := commitT(t, l, recs("c", 1, false)); b != 2 {
		t.Fatalf("commit after the cut at %d, want 2", b)
	}
	if got := readToAll(t, l); got[2].CommittedAt != 1500 {
		t.Fatalf("commit after the cut stamped %d, want 1500 (the floor is the kept newest, 1000)", got[2].CommittedAt)
	}
	l.Close()
	l = openT(t, dir, heldOpts())
	defer l.Close()
	if got := readToAll(t, l); len(got) != 3 || string(got[2].Payload) != "c-0" {
		t.Fatalf("reopened: %v", got)
	}
}

// A cut several segments back removes the later segment files whole and
// continues in the segment holding the cut, which takes writes again.
func TestTruncateAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{Held: true, SegmentBytes: 200})
	for i := uint64(0); i < 8; i++ {
		if err := l.Append(leaderRecs(i*3, int64(i), int64(i), int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	before := len(segmentFiles(t, dir))
	want := cloneRecords(readToAll(t, l)[:7])
	if err := l.TruncateTo(7); err != nil { // inside the third batch
		t.Fatal(err)
	}
	after := segmentFiles(t, dir)
	for _, f := range after {
		var base uint64
		if b, ok := parseSegmentName(filepath.Base(f)); ok {
			base = b
		}
		if base > 7 {
			t.Fatalf("segment %s past the cut survived", filepath.Base(f))
		}
	}
	if len(after) >= before {
		t.Fatalf("%d segment files after the cut, %d before", len(after), before)
	}
	sameRecords(t, readToAll(t, l), want)
	if err := l.Append(leaderRecs(7, 9)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = openT(t, dir, Options{Held: true, SegmentBytes: 200})
	defer l.Close()
	if got := readToAll(t, l); len(got) != 8 || got[7].CommittedAt != 9 {
		t.Fatalf("reopened: %d records", len(got))
	}
	sameRecords(t, readToAll(t, l)[:7], want)
}

// A cut at the very first record empties the log but keeps its offsets:
// the next Append starts there.
func TestTruncateEverythingUnreleased(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, heldOpts())
	if err := l.Append(leaderRecs(0, 5, 6)); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(0); err != nil || l.End() != 0 {
		t.Fatalf("TruncateTo(0): %v, end %d", err, l.End())
	}
	if err := l.Append(leaderRecs(0, 1)); err != nil {
		t.Fatalf("Append after emptying (time below the cut records'): %v", err)
	}
	l.Close()
	if h, err := ReadHWMFile(dir); err != nil || h.HWM != 1 {
		t.Fatalf("hwm file after close: %+v, %v", h, err)
	}
	if _, err := os.Stat(filepath.Join(dir, segmentName(0))); err != nil {
		t.Fatal(err)
	}
}

// The rewritten head carries no WAL source and the log forgets the cut
// frames' sources: a re-dispatch of the cut seqs is committed again.
func TestTruncateForgetsCutSources(t *testing.T) {
	l := openT(t, t.TempDir(), heldOpts())
	defer l.Close()
	if _, _, err := l.CommitFrom(recs("a", 2, false), Source{Origin: 9, Seqs: []uint64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.CommitFrom(recs("b", 2, false), Source{Origin: 9, Seqs: []uint64{3, 4}}); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if _, skipped, err := l.CommitFrom(recs("b", 2, false), Source{Origin: 9, Seqs: []uint64{3, 4}}); err != nil || skipped != 0 {
		t.Fatalf("re-dispatch of the cut seqs: skipped %d, %v; want none skipped", skipped, err)
	}
	if _, skipped, _ := l.CommitFrom(recs("a", 1, false), Source{Origin: 9, Seqs: []uint64{2}}); skipped != 1 {
		t.Fatal("a kept seq was not skipped")
	}
}
