package fanout

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// commitLazy commits into a parent partition the way the dispatcher does
// for records of this node's WAL: visible before the log's fdatasync.
func (f *faultNode) commitLazy(t *testing.T, p int, seq uint64, keys ...string) {
	t.Helper()
	recs := make([]storage.Record, len(keys))
	seqs := make([]uint64, len(keys))
	for i, k := range keys {
		recs[i].Payload, seqs[i] = []byte(fmt.Sprintf("src|p%d|%s", p, k)), seq+uint64(i)
	}
	if _, err := f.b.Commit(context.Background(), "src", 0, p, recs, storage.Source{Origin: 7, Seqs: seqs, Lazy: true}); err != nil {
		t.Fatal(err)
	}
}

// The cursor file never passes the parent's flushed high watermark: an
// advance over lazily committed records flushes the parent first, and
// when that flush fails the file is held at what the parent has on disk
// (a power cut may copy records again, never skip them).
func TestCursorFileNeverPastTheParentsFlushedHWM(t *testing.T) {
	f := newFaultNode(t)
	child := f.attach("src", "dst", 0)
	f.e.Start()
	f.commit("src", 0, "a")
	f.waitDurable(t, child.AttachEpoch, 1)
	f.commitLazy(t, 0, 1, "b", "c")
	f.waitDurable(t, child.AttachEpoch, 3)
	parent := f.b.Partitions().Peek("src", 0)
	if parent.Flushed() != 3 {
		t.Fatalf("the cursor file is at 3, the parent flushed only to %d", parent.Flushed())
	}
	// The parent's segment only (the child's commit fsyncs its own).
	f.fs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: filepath.Join("src", storage.PartitionDirName(0), "00000000000000000000.log"), Times: 1, Err: syscall.EIO})
	f.commitLazy(t, 0, 3, "d")
	waitFor(t, 10*time.Second, "the child copy of d", func() bool { return f.total("dst", 1) == 4 })
	waitFor(t, 10*time.Second, "the cursor past d in memory", func() bool { pos, _ := f.reported(); return pos == 4 })
	if st, ok, err := f.durable(); err != nil || !ok || st.NextOffset != 3 {
		t.Fatalf("cursor file %+v %v %v, want it held at the parent's flushed 3", st, ok, err)
	}
}
