package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func openT(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return l
}

func recs(prefix string, n int, keyed bool) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i].Payload = []byte(fmt.Sprintf("%s-%d", prefix, i))
		if keyed {
			out[i].Key = []byte(fmt.Sprintf("k%d", i%7))
		}
	}
	return out
}

func commitT(t testing.TB, l *Log, rs []Record) uint64 {
	t.Helper()
	base, err := l.Commit(rs)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return base
}

// readAll reads every committed record from from to the HWM.
func readAll(t testing.TB, l *Log, from uint64) []Record {
	t.Helper()
	var out []Record
	for {
		res, err := l.Read(from, 1000, 1<<30, NoDueLimit)
		if err != nil {
			t.Fatalf("read from %d: %v", from, err)
		}
		if len(res.Records) == 0 && res.Skipped == 0 {
			return out
		}
		out = append(out, res.Records...)
		from = res.Next
	}
}

func segmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
