package storage

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/testutil"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// queueLen reports the group-commit queue and whether a leader is active.
func queueLen(l *Log) (int, bool) {
	l.gmu.Lock()
	defer l.gmu.Unlock()
	return len(l.queue), l.leading
}

type commitResult struct {
	base uint64
	err  error
}

// Issue 9 §5 "storage commit hang": when the flush before a segment roll
// fails, every batch of the group must get the error — those already
// encoded into the failed flush as well as those after the roll point.
// The group is built deterministically: the test holds the produce lock
// while a leader takes its group, so three more batches queue behind it and
// become the next leader's group; the segment cap makes the third of them
// roll, so the first two are the flush that fails.
func TestFailedFlushBeforeRollFailsEveryWaiter(t *testing.T) {
	for _, c := range []struct {
		name string
		rule errorfs.Rule
	}{
		{"write ENOSPC", errorfs.Rule{Ops: errorfs.OpWrite, Path: ".log", After: 1, Times: 1, Err: syscall.ENOSPC}},
		{"fdatasync EIO", errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", After: 1, Times: 1, Err: syscall.EIO}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := errorfs.New(vfs.Default)
			// One record "x-0" makes a 44-byte frame: the leader's frame and
			// two more fit in 140 bytes, the third rolls.
			l := openT(t, t.TempDir(), Options{FS: fsys, SegmentBytes: 140})
			defer l.Close()
			in := fsys.Inject(c.rule)

			l.commitMu.Lock()
			lead := make(chan commitResult, 1)
			go func() { b, err := l.Commit(recs("x", 1, false)); lead <- commitResult{b, err} }()
			testutil.WaitFor(t, "the leader to take its group", func() bool { n, leading := queueLen(l); return leading && n == 0 })
			results := make([]chan commitResult, 3)
			for i, id := range []string{"b", "c", "d"} {
				results[i] = make(chan commitResult, 1)
				go func(ch chan commitResult) { b, err := l.Commit(recs(id, 1, false)); ch <- commitResult{b, err} }(results[i])
				testutil.WaitFor(t, "batch "+id+" to queue", func() bool { n, _ := queueLen(l); return n == i+1 })
			}
			l.commitMu.Unlock()

			if r := <-lead; r.err != nil || r.base != 0 {
				t.Fatalf("leader's commit: base %d, %v", r.base, r.err)
			}
			for i, ch := range results {
				select {
				case r := <-ch:
					if !errors.Is(r.err, c.rule.Err) {
						t.Fatalf("batch %d of the failed group: %v, want %v", i, r.err, c.rule.Err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("batch %d of the failed group never returned: its caller blocks forever", i)
				}
			}
			if in.Fired() != 1 {
				t.Fatalf("the fault fired %d times", in.Fired())
			}
			if l.HWM() != 1 {
				t.Fatalf("hwm %d after the failed group, want 1", l.HWM())
			}
		})
	}
}
