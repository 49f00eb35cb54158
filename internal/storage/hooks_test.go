package storage

import (
	"testing"
	"time"
)

// Every commit group is timed twice: its write into the segment file
// (Flush, narad_storage_flush_duration_seconds), then its fdatasync
// (Fsync), each once per group.
func TestCommitTimesFlushAndFsync(t *testing.T) {
	var flushes, fsyncs int
	l := openT(t, t.TempDir(), Options{Hooks: Hooks{
		Flush: func(time.Duration) { flushes++ },
		Fsync: func(time.Duration) { fsyncs++ },
	}})
	defer l.Close()
	for i := range 3 {
		commitT(t, l, recs("r", i+1, false))
	}
	if flushes != 3 || fsyncs != 3 {
		t.Fatalf("3 commits timed %d flushes and %d fsyncs, want 3 and 3", flushes, fsyncs)
	}
}
