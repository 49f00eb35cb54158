package storage

import (
	"errors"
	"os"
	"testing"
	"time"
)

// CommitTimeAt reads the commit time of any record of a closed log, in
// the first frame, inside a frame of several records, and in a later
// segment; past the records the directory holds it is an error.
func TestCommitTimeAtReadsAClosedLog(t *testing.T) {
	dir := t.TempDir()
	now := time.UnixMilli(1_700_000_000_000)
	l := openT(t, dir, Options{SegmentBytes: 256, Now: func() time.Time { return now }})
	want := map[uint64]int64{}
	for i := range 12 {
		now = now.Add(time.Duration(i+1) * time.Second)
		base := commitT(t, l, recs("r", 1+i%3, false))
		for o := base; o < l.HWM(); o++ {
			want[o] = now.UnixMilli()
		}
	}
	end := l.HWM()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, dir)); n < 3 {
		t.Fatalf("%d segments: the test wants records past the first one", n)
	}
	for o := range end {
		got, err := CommitTimeAt(nil, dir, o)
		if err != nil {
			t.Fatalf("offset %d: %v", o, err)
		}
		if got != want[o] {
			t.Errorf("offset %d: commit time %d, want %d", o, got, want[o])
		}
	}
	if _, err := CommitTimeAt(nil, dir, end); err == nil {
		t.Errorf("offset %d, past the last record: no error", end)
	}
	if _, err := CommitTimeAt(nil, dir+"-none", 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing directory: %v", err)
	}
}
