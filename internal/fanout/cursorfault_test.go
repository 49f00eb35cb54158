package fanout

import (
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// The cursor file under a full disk and I/O errors (errorfs on the cursor
// file only; the logs are not touched). What holds in every case: the
// position a cursor reports never passes what its file durably records,
// the child gets no duplicate for a failing cursor write, nothing is
// skipped, and once the fault heals the cursor goes on by itself, with no
// restart of the engine.

type faultNode struct {
	*node
	fs   *errorfs.FS
	path string
	k    cursorKey
}

func newFaultNode(t *testing.T) *faultNode {
	fsys := errorfs.New(vfs.Default)
	n := newNode(t, Config{FS: fsys, Backoff: 10 * time.Millisecond})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	return &faultNode{node: n, fs: fsys, k: cursorKey{"src", "dst", 0},
		path: filepath.Join(n.dir, "topics", "src", "p00000", CursorFileName("dst"))}
}

// durable is the file's record as the disk holds it (read past errorfs).
func (f *faultNode) durable() (CursorState, bool, error) { return ReadCursorFile(f.path) }

// running is the cursor running for the link, if any.
func (f *faultNode) running() *cursor {
	f.e.mu.Lock()
	defer f.e.mu.Unlock()
	return f.e.running[f.k]
}

// reported is where the engine says the cursor stands (what the listing,
// the stats RPC and moves see).
func (f *faultNode) reported() (uint64, bool) {
	for _, cp := range f.e.CursorPositions("src", 0) {
		if cp.Child == "dst" {
			return cp.NextOffset, true
		}
	}
	return 0, false
}

func (f *faultNode) waitDurable(t *testing.T, epoch string, next uint64) {
	t.Helper()
	waitFor(t, 10*time.Second, "the cursor file durably at "+strconv.FormatUint(next, 10), func() bool {
		st, ok, err := f.durable()
		return err == nil && ok && st.Epoch == epoch && st.NextOffset == next
	})
}

// An in-place advance whose write or fdatasync fails leaves the cursor
// running where it was: it rewrites the whole record until the disk takes
// it (a rewrite re-dirties the page, so a retried fdatasync really writes
// it), never re-reads and re-commits the slab, and never reports the new
// position before the record is durable.
func TestCursorAdvanceFaultsHoldThePosition(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   errorfs.Op
		err  error
		torn float64
	}{
		{"write ENOSPC", errorfs.OpWrite, syscall.ENOSPC, 0},
		{"write ENOSPC torn", errorfs.OpWrite, syscall.ENOSPC, 0.5},
		{"write EIO", errorfs.OpWrite, syscall.EIO, 0},
		{"fdatasync EIO", errorfs.OpSync, syscall.EIO, 0},
		{"fdatasync ENOSPC", errorfs.OpSync, syscall.ENOSPC, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultNode(t)
			child := f.attach("src", "dst", 0)
			f.e.Start()
			f.commit("src", 0, "a", "b")
			f.waitDurable(t, child.AttachEpoch, 2)
			first := f.running()

			in := f.fs.Inject(errorfs.Rule{Ops: tc.op, Path: CursorFileName("dst"), Err: tc.err, Torn: tc.torn})
			f.commit("src", 0, "c")
			waitFor(t, 10*time.Second, "several failed advances", func() bool { return in.Fired() >= 4 })
			if got := f.total("dst", 1); got != 3 {
				t.Fatalf("the child holds %d records while the cursor file fails, want 3 (c committed once)", got)
			}
			if pos, ok := f.reported(); !ok || pos != 2 {
				t.Fatalf("the cursor reports position %d (known %v) before its record is durable, want 2", pos, ok)
			}
			if f.running() != first {
				t.Fatal("the cursor exited on a failing cursor file write instead of retrying it")
			}

			in.Remove() // space freed, disk back
			f.waitDurable(t, child.AttachEpoch, 3)
			waitFor(t, 10*time.Second, "the cursor reporting 3", func() bool { pos, _ := f.reported(); return pos == 3 })
			f.commit("src", 0, "d")
			f.waitDurable(t, child.AttachEpoch, 4)
			if got := f.total("dst", 1); got != 4 || f.running() != first {
				t.Fatalf("after the fault healed: child %d records (want 4), same cursor %v", got, f.running() == first)
			}
		})
	}
}

// A first anchor that cannot be written (the temp file's create, write or
// fsync, or its rename) leaves no cursor file and copies nothing; the
// cursor gives up and the reconciler tries again each tick, re-confirming
// with the leader each time. Once the fault heals the anchor lands at the
// attach point — not at the tail — so records committed meanwhile are
// delivered. (A failed directory fsync after the rename is covered in vfs:
// the file is then in place and the next start resumes it.)
func TestCursorAnchorFaultsRetryAtTheAttachPoint(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   errorfs.Op
		err  error
	}{
		{"create ENOSPC", errorfs.OpOpen, syscall.ENOSPC},
		{"write ENOSPC", errorfs.OpWrite, syscall.ENOSPC},
		{"write EIO", errorfs.OpWrite, syscall.EIO},
		{"fsync EIO", errorfs.OpSync, syscall.EIO},
		{"rename EIO", errorfs.OpRename, syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultNode(t)
			child := f.attach("src", "dst", 0)
			in := f.fs.Inject(errorfs.Rule{Ops: tc.op, Path: CursorFileName("dst"), Err: tc.err})
			f.e.Start()
			f.commit("src", 0, "a", "b")
			waitFor(t, 10*time.Second, "the anchor retried", func() bool { return in.Fired() >= 3 })
			if _, ok, err := f.durable(); ok || err != nil {
				t.Fatalf("a failed anchor left a cursor file (err %v)", err)
			}
			if got := f.total("dst", 1); got != 0 {
				t.Fatalf("the child holds %d records without an anchored cursor", got)
			}
			in.Remove()
			f.waitDurable(t, child.AttachEpoch, 2)
			if got := f.total("dst", 1); got != 2 {
				t.Fatalf("after the fault healed the child holds %d records, want both from the attach point", got)
			}
			if tmps, _ := filepath.Glob(f.path + ".tmp*"); len(tmps) != 0 {
				t.Fatalf("failed anchors left temp files: %v", tmps)
			}
		})
	}
}

// A cursor file that cannot be read (EIO opening or reading it) is not a
// missing file: the cursor neither anchors over it nor starts anywhere
// else. It gives up and the reconciler tries again each tick; the listing
// says the lag is not known instead of measuring from the attach point.
// Once the fault heals the cursor resumes exactly where the file says.
func TestCursorReadFaultsNeverAnchor(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   errorfs.Op
	}{{"open EIO", errorfs.OpOpen}, {"read EIO", errorfs.OpRead}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultNode(t)
			child := f.attach("src", "dst", 0)
			f.e.Start()
			f.commit("src", 0, "a", "b")
			f.waitDurable(t, child.AttachEpoch, 2)
			f.e.Close()

			in := f.fs.Inject(errorfs.Rule{Ops: tc.op, Path: CursorFileName("dst"), Err: syscall.EIO})
			f.e = f.newEngine(f.e.cfg) // the node restarts its engine
			t.Cleanup(f.e.Close)
			f.e.Start()
			f.commit("src", 0, "c")
			waitFor(t, 10*time.Second, "the start retried", func() bool { return in.Fired() >= 3 })
			if st, ok, err := f.durable(); err != nil || !ok || st.Epoch != child.AttachEpoch || st.NextOffset != 2 {
				t.Fatalf("an unreadable cursor file was replaced: %+v %v %v", st, ok, err)
			}
			if got := f.total("dst", 1); got != 2 {
				t.Fatalf("the child holds %d records, want 2: nothing copied from an unknown position", got)
			}
			v, err := f.e.Children("src")
			if err != nil || len(v.Children) != 1 || v.Children[0].LagComplete {
				t.Fatalf("listing with an unreadable cursor file: %+v %v; want lag_complete false", v, err)
			}
			in.Remove()
			f.waitDurable(t, child.AttachEpoch, 3)
			if got := f.total("dst", 1); got != 3 {
				t.Fatalf("after the fault healed the child holds %d records, want 3 (resumed at 2, no replay)", got)
			}
		})
	}
}

// TestCursorAnchorIsDurableInItsParents: a cursor anchored in a parent
// partition never written yet creates the partition's directories; once
// the anchor is durable, none of their entries is left to a power cut (a
// lost cursor file re-anchors at the attach point and copies again).
func TestCursorAnchorIsDurableInItsParents(t *testing.T) {
	f := newFaultNode(t)
	child := f.attach("src", "dst", 0)
	f.e.Start()
	f.waitDurable(t, child.AttachEpoch, 0)
	// The file is readable once renamed into place; its directory's fsync
	// follows.
	topics := filepath.Join(f.dir, "topics")
	waitFor(t, 5*time.Second, "no entry under topics/ left to a power cut", func() bool {
		return len(f.fs.UnsyncedEntries(topics)) == 0
	})
}

// TestCursorCopyIsDurableInItsParents: a follower's copy of a cursor file,
// written for a parent partition never written here, leaves none of the
// directory entries it made to a power cut.
func TestCursorCopyIsDurableInItsParents(t *testing.T) {
	f := newFaultNode(t)
	link := f.attach("src", "dst", 0)
	if ok, err := f.e.WriteCursorCopy("src", 0, CursorCopy{Child: "dst", Epoch: link.AttachEpoch, NextOffset: 0}); err != nil || !ok {
		t.Fatalf("cursor copy: %v %v", ok, err)
	}
	if got := f.fs.UnsyncedEntries(filepath.Join(f.dir, "topics")); len(got) != 0 {
		t.Fatalf("after the copy, entries a power cut could remove: %v", got)
	}
}
