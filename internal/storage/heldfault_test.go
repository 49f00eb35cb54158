package storage

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// Faults through errorfs at every file call of TruncateTo and Append, one
// at a time: whatever the call answers, the directory reopens (after a
// power cut: unsynced writes lost) as a contiguous log holding exactly a
// prefix of what was written, never shorter than what was acknowledged,
// with no shortfall reported.

var heldFaultOps = []errorfs.Op{errorfs.OpWrite, errorfs.OpSync, errorfs.OpRename, errorfs.OpRemove,
	errorfs.OpTruncate, errorfs.OpOpen, errorfs.OpRead}

// heldFaultLog is a held log through errorfs with 5 batches of 3 records
// in 250-byte segments (two batches each: segments at 0, 6, 12), 1
// released.
func heldFaultLog(t *testing.T) (*Log, *errorfs.FS, string, []Record) {
	t.Helper()
	fsys := errorfs.New(vfs.Default)
	dir := t.TempDir()
	l := openT(t, dir, Options{Held: true, SegmentBytes: 250, FS: fsys, HWMPersistInterval: time.Hour})
	for i := uint64(0); i < 5; i++ {
		if err := l.Append(leaderRecs(i*3, int64(i), int64(i), int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	l.Release(1)
	// The hwm file claims the durable end (15), as the persist loop
	// leaves it: a truncation must lower that claim before it cuts.
	if err := l.PersistHWM(15); err != nil {
		t.Fatal(err)
	}
	return l, fsys, dir, cloneRecords(readToAll(t, l))
}

// reopenConsistent reopens dir on the real disk and checks it holds a
// prefix of written of at least min records; it returns the log's end.
func reopenConsistent(t *testing.T, dir string, written []Record, least uint64) uint64 {
	t.Helper()
	var shortfalls int
	l, err := Open(dir, Options{Held: true, SegmentBytes: 250, Hooks: Hooks{Shortfall: func() { shortfalls++ }}})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l.Close()
	end := l.End()
	if shortfalls != 0 || end < least || end > uint64(len(written)) {
		t.Fatalf("reopened with end %d (%d shortfalls); want %d..%d and none", end, shortfalls, least, len(written))
	}
	sameRecords(t, readToAll(t, l), written[:end])
	return end
}

func TestTruncateFaultsReopenConsistent(t *testing.T) {
	// Inside a frame first in its segment (replaced), inside a frame after
	// another (a new segment file shadows it), at a frame boundary, at a
	// segment's start; the later segments are removed (two of them, but
	// for the last).
	for _, off := range []uint64{1, 4, 3, 6} {
		for _, op := range heldFaultOps {
			for k := 0; ; k++ {
				name := fmt.Sprintf("cut %d, %v fails after %d", off, op, k)
				l, fsys, dir, written := heldFaultLog(t)
				in := fsys.Inject(errorfs.Rule{Ops: op, After: k, Times: 1, Err: syscall.EIO})
				err := l.TruncateTo(off)
				hit := in.Fired() > 0
				fsys.Clear()
				if err == nil && l.End() != off {
					t.Fatalf("%s: answered nil with end %d", name, l.End())
				}
				if err != nil && !l.Fenced() && l.End() != uint64(len(written)) {
					t.Fatalf("%s: failed unfenced (%v) but changed the end to %d", name, err, l.End())
				}
				if err != nil && l.Fenced() && l.Recover() == nil {
					t.Fatalf("%s: a fence after a partial truncation lifted by Recover", name)
				}
				// A power cut now: an acknowledged truncation must hold; a
				// failed one may have happened or not.
				fsys.LoseUnsyncedWrites()
				if end := reopenConsistent(t, dir, written, off); err == nil && end != off {
					t.Fatalf("%s: acknowledged truncation to %d reopens at %d", name, off, end)
				}
				l.Close()
				if !hit {
					break // the fault is past the last matching call
				}
			}
		}
	}
}

// A log fenced by a failed truncation and then closed (not crashed) still
// reopens consistent: Close writes no hwm claim past the cut.
func TestTruncateFaultThenClose(t *testing.T) {
	for _, op := range []errorfs.Op{errorfs.OpRename, errorfs.OpRemove} {
		l, fsys, dir, written := heldFaultLog(t)
		fsys.Inject(errorfs.Rule{Ops: op, Times: 1, Err: syscall.EIO})
		if err := l.TruncateTo(4); err == nil || !l.Fenced() {
			t.Fatalf("%v: %v, fenced %v", op, err, l.Fenced())
		}
		fsys.Clear()
		if err := l.Append(leaderRecs(4, 9)); !errors.Is(err, ErrFenced) {
			t.Fatalf("%v: Append on a log fenced by truncation: %v", op, err)
		}
		l.Close()
		reopenConsistent(t, dir, written, 4)
	}
}

func TestAppendFaultsReopenConsistent(t *testing.T) {
	for _, op := range heldFaultOps {
		for k := 0; ; k++ {
			name := fmt.Sprintf("%v fails after %d", op, k)
			l, fsys, dir, written := heldFaultLog(t)
			next := leaderRecs(15, 8, 8, 8)
			in := fsys.Inject(errorfs.Rule{Ops: op, After: k, Times: 1, Err: syscall.EIO, LoseUnsynced: true})
			err := l.Append(next)
			hit := in.Fired() > 0
			fsys.Clear()
			least := uint64(15)
			if err == nil {
				least = 18
				if l.End() != 18 {
					t.Fatalf("%s: Append answered nil with end %d", name, l.End())
				}
			} else if l.End() != 15 {
				t.Fatalf("%s: a failed Append (%v) moved the end to %d", name, err, l.End())
			}
			if err != nil && l.Fenced() {
				if rerr := l.Recover(); rerr != nil {
					t.Fatalf("%s: Recover: %v", name, rerr)
				}
			}
			fsys.LoseUnsyncedWrites()
			reopenConsistent(t, dir, append(written, next...), least)
			l.Close()
			if !hit {
				break
			}
		}
	}
}
