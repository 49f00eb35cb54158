package wal

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
)

func TestReadLimits(t *testing.T) {
	w := openT(t, t.TempDir(), Options{})
	appendRange(t, w, 0, 50, 5)
	frame := func(seq uint64) int {
		r := testRecord(int(seq - 1))
		n, _ := encodedSize(&r)
		return n
	}
	sum := func(lo, hi uint64) (n int) {
		for s := lo; s <= hi; s++ {
			n += frame(s)
		}
		return n
	}
	cases := []struct {
		name           string
		from           uint64
		max, maxBytes  int
		wantLo, wantHi uint64 // wantHi < wantLo means empty
		wantErr, errIs error
		wantAnyErr     bool
	}{
		{name: "count limit", from: 1, max: 10, wantLo: 1, wantHi: 10},
		{name: "middle to end", from: 45, max: 10, wantLo: 45, wantHi: 50},
		{name: "from just past last", from: 51, max: 10, wantLo: 1, wantHi: 0},
		{name: "from far past last", from: 1000, max: 10, wantLo: 1, wantHi: 0},
		{name: "bytes exactly five records", from: 3, max: 100, maxBytes: sum(3, 7), wantLo: 3, wantHi: 7},
		{name: "bytes one short of six", from: 3, max: 100, maxBytes: sum(3, 8) - 1, wantLo: 3, wantHi: 7},
		{name: "first record larger than maxBytes", from: 20, max: 100, maxBytes: 1, wantLo: 20, wantHi: 20},
		{name: "from zero not retained", from: 0, max: 10, errIs: ErrNotRetained},
		{name: "max zero", from: 1, max: 0, wantAnyErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := w.Read(tc.from, tc.max, tc.maxBytes)
			switch {
			case tc.errIs != nil:
				mustErrIs(t, err, tc.errIs)
				return
			case tc.wantAnyErr:
				if err == nil {
					t.Fatal("Read succeeded")
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if tc.wantHi < tc.wantLo {
				if len(got) != 0 {
					t.Fatalf("got %d records, want none", len(got))
				}
				return
			}
			checkRecords(t, got, tc.wantLo, tc.wantHi)
		})
	}
}

// Reads that do not continue the previous one go through the segment list
// and the sparse index; every start position must land on the right record.
func TestReadRandomAccessAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir, Options{SegmentBytes: 200 << 10})
	const n = 6000
	appendRange(t, w, 0, n, 97) // odd batch size: index entries fall mid-run
	if len(segmentFiles(t, dir)) < 2 {
		t.Fatal("test premise: several segments")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		from := 1 + rng.Uint64N(n)
		max := 1 + rng.IntN(30)
		got, err := w.Read(from, max, 0)
		if err != nil {
			t.Fatalf("Read(%d, %d): %v", from, max, err)
		}
		checkRecords(t, got, from, min(from+uint64(max)-1, n))
	}
}

func TestReadResultsOwnTheirMemory(t *testing.T) {
	w := openT(t, t.TempDir(), Options{})
	appendRange(t, w, 0, 20, 20)
	first, err := w.Read(1, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Read(11, 10, 0); err != nil { // reuses the read window
		t.Fatal(err)
	}
	checkRecords(t, first, 1, 10)
	for i := range first {
		clear(first[i].Payload)
	}
	again, err := w.Read(1, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, again, 1, 10)
}

// The dispatcher pattern: long-poll on Notify, Read from where it left off,
// advance the checkpoint, all while producers append and segments rotate and
// get deleted underneath.
func TestDispatcherFollowsTailWhileAppending(t *testing.T) {
	w := openT(t, t.TempDir(), Options{SegmentBytes: 4 << 10, RotateDispatchedBytes: 1 << 10})
	const producers, each = 4, 150
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				r := testRecord(p*each + i)
				if err := w.Append(context.Background(), []Record{r}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	seen := make(map[string]bool)
	next := uint64(1)
	for next <= producers*each {
		ch := w.Notify()
		got, err := w.Read(next, 37, 2<<10)
		if err != nil {
			t.Fatalf("Read(%d): %v", next, err)
		}
		if len(got) == 0 {
			recv(t, "notify of more records", ch)
			continue
		}
		for _, r := range got {
			if r.Seq != next {
				t.Fatalf("got seq %d, want %d", r.Seq, next)
			}
			seen[string(r.Payload)] = true
			next++
		}
		if err := w.SetCheckpoint(next); err != nil {
			t.Fatalf("SetCheckpoint(%d): %v", next, err)
		}
	}
	wg.Wait()
	for i := range producers * each {
		if !seen[string(testRecord(i).Payload)] {
			t.Fatalf("record %d never dispatched", i)
		}
	}
}

// Damage to durable data found by Read names the file and position.
func TestReadReportsCorruptionWithPosition(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir, Options{})
	appendRange(t, w, 0, 10, 1)
	path := filepath.Join(dir, segmentName(1))
	offs := frameOffsets(t, path)
	editFile(t, path, func(b []byte) []byte { b[offs[4]+frameHeaderSize+3] ^= 1; return b })
	_, err := w.Read(1, 10, 0)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Path != path || ce.Offset != offs[4] {
		t.Fatalf("Read error %v, want CorruptError at %s:%d", err, path, offs[4])
	}
	// A retry starts afresh and fails the same way rather than skipping.
	if _, err := w.Read(5, 1, 0); !errors.As(err, &ce) || ce.Offset != offs[4] {
		t.Fatalf("retry error %v", err)
	}
}
