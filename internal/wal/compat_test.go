package wal

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// testdata/v1 is a WAL written by the binary before record version 2
// (appendRange(0, 40, 4), then SetCheckpoint(5)): its records must still
// open, recover and read, with Incarnation 0, and new records follow
// them as version 2 in the same segment.
func TestOpensAVersion1WALWrittenByAnOlderBinary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ingress")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{segmentName(1), checkpointName} {
		b, err := os.ReadFile(filepath.Join("testdata", "v1", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := openT(t, dir, Options{})
	if w.Checkpoint() != 5 || w.LastSeq() != 40 {
		t.Fatalf("checkpoint %d last %d, want 5 and 40", w.Checkpoint(), w.LastSeq())
	}
	old := readAll(t, w, 5)
	checkRecords(t, old, 5, 40)
	for _, r := range old {
		if r.Incarnation != 0 {
			t.Fatalf("version-1 record %d decoded with incarnation %d", r.Seq, r.Incarnation)
		}
	}
	rec := testRecord(40)
	rec.Incarnation = 77
	if err := w.Append(context.Background(), []Record{rec}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	w2 := openT(t, dir, Options{})
	all := readAll(t, w2, 5)
	checkRecords(t, all, 5, 41)
	if got := all[len(all)-1].Incarnation; got != 77 {
		t.Fatalf("version-2 record after version-1 ones has incarnation %d, want 77", got)
	}
}

func TestIncarnationRoundTrips(t *testing.T) {
	w := openT(t, t.TempDir(), Options{})
	recs := []Record{testRecord(0), testRecord(1)}
	recs[0].Incarnation, recs[1].Incarnation = 1<<40+3, 0
	if err := w.Append(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, w, 1)
	if len(got) != 2 || got[0].Incarnation != 1<<40+3 || got[1].Incarnation != 0 {
		t.Fatalf("read back %+v", got)
	}
}
