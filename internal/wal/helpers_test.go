package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testRecord is a deterministic record for index i: topic, key presence,
// partition and payload size all vary with i so layout bugs show up.
func testRecord(i int) Record {
	r := Record{
		Topic:      fmt.Sprintf("topic-%d", i%3),
		Partition:  int32(i % 7),
		AcceptedAt: 1_700_000_000_000 + int64(i),
		Payload:    []byte(fmt.Sprintf("payload-%d-%s", i, strings.Repeat("x", i%97))),
	}
	if i%4 != 0 {
		r.Key = []byte(fmt.Sprintf("key-%d", i))
	}
	return r
}

func openT(t testing.TB, dir string, opts Options) *WAL {
	t.Helper()
	w, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func openHooked(t testing.TB, dir string, opts Options, h testHooks) *WAL {
	t.Helper()
	w, err := open(dir, opts, h)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// appendRange appends testRecord(i) for i in [lo, hi) in batches of per and
// checks the seqs assigned are i+seqBase.
func appendRange(t testing.TB, w *WAL, lo, hi, per int) {
	t.Helper()
	for i := lo; i < hi; i += per {
		recs := make([]Record, 0, per)
		for j := i; j < min(i+per, hi); j++ {
			recs = append(recs, testRecord(j))
		}
		if err := w.Append(context.Background(), recs); err != nil {
			t.Fatalf("Append records %d..%d: %v", i, i+len(recs)-1, err)
		}
	}
}

// readAll reads every record from from to LastSeq.
func readAll(t testing.TB, w *WAL, from uint64) []Record {
	t.Helper()
	var out []Record
	for {
		got, err := w.Read(from, 100, 0)
		if err != nil {
			t.Fatalf("Read(%d): %v", from, err)
		}
		if len(got) == 0 {
			return out
		}
		out = append(out, got...)
		from = got[len(got)-1].Seq + 1
	}
}

func sameRecord(a, b Record) bool {
	return a.Topic == b.Topic && bytes.Equal(a.Key, b.Key) && a.Partition == b.Partition &&
		bytes.Equal(a.Payload, b.Payload) && a.AcceptedAt == b.AcceptedAt && slices.Equal(a.Headers, b.Headers)
}

// checkRecords asserts got holds testRecord(i) with seq i+1 for consecutive
// i starting at firstSeq-1.
func checkRecords(t testing.TB, got []Record, firstSeq, lastSeq uint64) {
	t.Helper()
	if want := int(lastSeq - firstSeq + 1); len(got) != want {
		t.Fatalf("got %d records, want %d (seqs %d..%d)", len(got), want, firstSeq, lastSeq)
	}
	for k, r := range got {
		seq := firstSeq + uint64(k)
		if r.Seq != seq {
			t.Fatalf("record %d has seq %d, want %d", k, r.Seq, seq)
		}
		if want := testRecord(int(seq - 1)); !sameRecord(r, want) {
			t.Fatalf("seq %d = %+v, want %+v", seq, r, want)
		}
	}
}

// recv waits for a value on ch with the same hang-detecting deadline.
func recv[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// gate is a beforeWrite hook that parks the syncer until the test releases
// it, telling the test when a batch has been taken (so is staged).
type gate struct {
	entered chan struct{}
	release chan error
}

func newGate() *gate { return &gate{entered: make(chan struct{}), release: make(chan error)} }

func (g *gate) hook() error {
	g.entered <- struct{}{}
	return <-g.release
}

func segmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segmentSuffix))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func mustErrIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
}
