package wal

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
)

func TestCheckpointNeverMovesBackwards(t *testing.T) {
	cases := []struct {
		name string
		sets []uint64
		want uint64
	}{
		{"starts at one", nil, 1},
		{"forward", []uint64{3, 7}, 7},
		{"backwards ignored", []uint64{7, 3}, 7},
		{"repeat is a no-op", []uint64{5, 5}, 5},
		{"zero ignored", []uint64{4, 0}, 4},
		{"up to last+1", []uint64{21}, 21},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := openT(t, dir, Options{})
			appendRange(t, w, 0, 20, 4)
			for _, s := range tc.sets {
				if err := w.SetCheckpoint(s); err != nil {
					t.Fatalf("SetCheckpoint(%d): %v", s, err)
				}
			}
			if got := w.Checkpoint(); got != tc.want {
				t.Fatalf("Checkpoint %d, want %d", got, tc.want)
			}
			w.Close()
			w2 := openT(t, dir, Options{})
			if got := w2.Checkpoint(); got != tc.want {
				t.Fatalf("Checkpoint after reopen %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCheckpointBeyondLastRefused(t *testing.T) {
	w := openT(t, t.TempDir(), Options{})
	appendRange(t, w, 0, 5, 1)
	if err := w.SetCheckpoint(7); err == nil {
		t.Fatal("SetCheckpoint past LastSeq+1 accepted")
	}
	if w.Checkpoint() != 1 {
		t.Fatalf("refused checkpoint moved it to %d", w.Checkpoint())
	}
}

func TestCheckpointDeletesSegmentsWhollyBelow(t *testing.T) {
	dir := t.TempDir()
	// Each record is ~60-150 bytes, so a 300-byte threshold seals a segment
	// every few one-record batches.
	w := openT(t, dir, Options{SegmentBytes: 300})
	appendRange(t, w, 0, 40, 1)
	segs := segmentFiles(t, dir)
	if len(segs) < 5 {
		t.Fatalf("expected several segments, got %v", segs)
	}
	firsts := make([]uint64, len(segs))
	for i, s := range segs {
		firsts[i], _ = parseSegmentName(s)
	}
	ck := firsts[3] + 1 // inside segment 3: segments 0-2 are wholly below
	if err := w.SetCheckpoint(ck); err != nil {
		t.Fatal(err)
	}
	// The syncer may rotate once more after the last Append returned, so
	// only the retained prefix is compared.
	if got := segmentFiles(t, dir); len(got) < len(segs)-3 || !slices.Equal(got[:len(segs)-3], segs[3:]) {
		t.Fatalf("segments after checkpoint %d = %v, want %v", ck, got, segs[3:])
	}
	_, err := w.Read(firsts[3]-1, 10, 0)
	mustErrIs(t, err, ErrNotRetained)
	// Records below the checkpoint that share a segment with newer ones
	// are still readable.
	checkRecords(t, readAll(t, w, firsts[3]), firsts[3], 40)

	// The active segment is never deleted, even when fully dispatched.
	if err := w.SetCheckpoint(41); err != nil {
		t.Fatal(err)
	}
	if got, want := segmentFiles(t, dir), segmentName(41); len(got) != 1 || got[0] != want {
		t.Fatalf("segments after full checkpoint = %v, want only %s", got, want)
	}
}

func TestRotateWhenFullyDispatched(t *testing.T) {
	const rotateAt = 1024
	cases := []struct {
		name          string
		records       int
		overThreshold bool   // premise, checked: the records exceed rotateAt
		lag           uint64 // checkpoint = LastSeq()+1-lag
		wantRotate    bool
	}{
		{"fully dispatched past threshold", 30, true, 0, true},
		{"one record undispatched", 30, true, 1, false},
		{"fully dispatched under threshold", 3, false, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{SegmentBytes: 1 << 20, RotateDispatchedBytes: rotateAt}
			w := openT(t, dir, opts)
			appendRange(t, w, 0, tc.records, 5)
			before := segmentFiles(t, dir)
			if len(before) != 1 {
				t.Fatalf("segments before %v", before)
			}
			sizeBefore := w.SizeBytes()
			if (sizeBefore > rotateAt) != tc.overThreshold {
				t.Fatalf("test premise broken: %d records are %d bytes", tc.records, sizeBefore)
			}
			ck := w.LastSeq() + 1 - tc.lag
			if err := w.SetCheckpoint(ck); err != nil {
				t.Fatal(err)
			}
			after := segmentFiles(t, dir)
			rotated := !slices.Equal(after, before)
			if rotated != tc.wantRotate {
				t.Fatalf("rotated=%v (segments %v -> %v), want %v", rotated, before, after, tc.wantRotate)
			}
			if !rotated {
				return
			}
			// The dispatched segment is gone; appends continue in the new one.
			if want := []string{segmentName(w.LastSeq() + 1)}; !slices.Equal(after, want) || w.SizeBytes() != 0 {
				t.Fatalf("after rotation segments %v size %d, want %v size 0", after, w.SizeBytes(), want)
			}
			appendRange(t, w, tc.records, tc.records+3, 1)
			w.Close()
			w2 := openT(t, dir, opts)
			checkRecords(t, readAll(t, w2, w2.Checkpoint()), uint64(tc.records+1), uint64(tc.records+3))
		})
	}
}

func TestReplayFromCheckpointAfterReopen(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 2048}
	w := openT(t, dir, opts)
	appendRange(t, w, 0, 100, 7)
	if err := w.SetCheckpoint(64); err != nil {
		t.Fatal(err)
	}
	w.Close()

	w2 := openT(t, dir, opts)
	if w2.Checkpoint() != 64 || w2.LastSeq() != 100 {
		t.Fatalf("after reopen checkpoint %d last %d, want 64 100", w2.Checkpoint(), w2.LastSeq())
	}
	// Everything not checkpointed is handed out again.
	checkRecords(t, readAll(t, w2, w2.Checkpoint()), 64, 100)
}

// A crash between writing the checkpoint and deleting segments leaves
// segments below it; Open removes them.
func TestOpenDeletesSegmentsLeftBelowCheckpoint(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 300}
	w := openT(t, dir, opts)
	appendRange(t, w, 0, 30, 1)
	w.Close()
	segs := segmentFiles(t, dir)
	last, _ := parseSegmentName(segs[len(segs)-1])
	if err := writeCheckpoint(vfs.Default, dir, last); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, checkpointTmpName), []byte("half-written"), 0o644); err != nil {
		t.Fatal(err)
	}
	w2 := openT(t, dir, opts)
	if got := segmentFiles(t, dir); !slices.Equal(got, segs[len(segs)-1:]) {
		t.Fatalf("segments after open %v, want %v", got, segs[len(segs)-1:])
	}
	if _, err := os.Stat(filepath.Join(dir, checkpointTmpName)); !os.IsNotExist(err) {
		t.Fatalf("stale checkpoint temp file not removed: %v", err)
	}
	checkRecords(t, readAll(t, w2, last), last, 30)
}

func TestOpenRefusesInconsistentCheckpoint(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"checksum mismatch", func(t *testing.T, dir string) {
			b := encodeCheckpoint(3)
			b[10] ^= 1
			os.WriteFile(filepath.Join(dir, checkpointName), b, 0o644)
		}},
		{"truncated file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, checkpointName), encodeCheckpoint(3)[:12], 0o644)
		}},
		{"beyond the last record", func(t *testing.T, dir string) {
			writeCheckpoint(vfs.Default, dir, 50)
		}},
		{"records between checkpoint and oldest segment missing", func(t *testing.T, dir string) {
			segs := segmentFiles(t, dir)
			os.Remove(filepath.Join(dir, segs[0]))
			writeCheckpoint(vfs.Default, dir, 2)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := openT(t, dir, Options{SegmentBytes: 300})
			appendRange(t, w, 0, 20, 1)
			w.Close()
			tc.setup(t, dir)
			w2, err := Open(dir, Options{SegmentBytes: 300})
			if err == nil {
				w2.Close()
				t.Fatal("Open succeeded")
			}
			mustErrIs(t, err, ErrCorrupt)
		})
	}
}

// With every segment gone but a checkpoint present, numbering continues at
// the checkpoint: seqs below it were committed and must never be reused.
func TestOpenWithOnlyCheckpointContinuesNumbering(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeCheckpoint(vfs.Default, dir, 1000); err != nil {
		t.Fatal(err)
	}
	w := openT(t, dir, Options{})
	if w.LastSeq() != 999 || w.Checkpoint() != 1000 {
		t.Fatalf("LastSeq %d Checkpoint %d, want 999 1000", w.LastSeq(), w.Checkpoint())
	}
	recs := []Record{testRecord(0)}
	if err := w.Append(t.Context(), recs); err != nil || recs[0].Seq != 1000 {
		t.Fatalf("first append got seq %d, %v; want 1000", recs[0].Seq, err)
	}
}
