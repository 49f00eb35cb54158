package wal

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/narad-io/narad/internal/header"
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

// testdata/v2 is a WAL written by the binary before record headers
// (appendRange(0, 40, 4), then SetCheckpoint(5)): it must open, recover
// and read with no headers, and records with headers (version 3) follow
// its version-2 ones in the same segment and survive a reopen.
func TestOpensAVersion2WALWrittenBeforeHeaders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ingress")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{segmentName(1), checkpointName} {
		b, err := os.ReadFile(filepath.Join("testdata", "v2", name))
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
	checkRecords(t, readAll(t, w, 5), 5, 40)
	rec := testRecord(40)
	rec.Headers = []header.Header{{Name: "content-type", Value: "text/plain"}, {Name: "trace-id", Value: "t1"}}
	plain := testRecord(41)
	if err := w.Append(context.Background(), []Record{rec, plain}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	w2 := openT(t, dir, Options{})
	all := readAll(t, w2, 5)
	checkRecords(t, all[:len(all)-2], 5, 40)
	if got := all[len(all)-2]; got.Seq != 41 || !sameRecord(got, rec) {
		t.Fatalf("record with headers read back as %+v", got)
	}
	if got := all[len(all)-1]; got.Seq != 42 || got.Headers != nil || !sameRecord(got, plain) {
		t.Fatalf("record without headers after one with: %+v", got)
	}
}

// Only a record with headers is version 3: one without keeps the bytes
// an older binary writes and reads.
func TestHeaderlessRecordsStayVersion2(t *testing.T) {
	r := testRecord(1)
	if v := encodeT(t, r, 1)[frameHeaderSize]; v != recordVersion {
		t.Fatalf("a record without headers is version %d", v)
	}
	r.Headers = []header.Header{{Name: "a", Value: "b"}}
	f := encodeT(t, r, 1)
	if f[frameHeaderSize] != recordVersionV3 {
		t.Fatalf("a record with headers is version %d", f[frameHeaderSize])
	}
	v, n, err := decodeFrame(f)
	if err != nil || n != len(f) {
		t.Fatal(err)
	}
	var a arena
	if got := v.record(&a, ""); !sameRecord(got, r) || got.Incarnation != r.Incarnation {
		t.Fatalf("decoded %+v, want %+v", got, r)
	}
}
