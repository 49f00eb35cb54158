package storage

import (
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// gatedFS holds every Datasync while armed until the test opens the gate,
// telling the test when one waits: a held log's commit is then between
// its publish and the end of its fdatasync.
type gatedFS struct {
	vfs.FS
	armed atomic.Bool
	held  chan struct{} // a Datasync waits
	open  chan struct{} // closed: every Datasync goes through
}

func (g *gatedFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := g.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return gatedFile{File: f, g: g}, nil
}

type gatedFile struct {
	vfs.File
	g *gatedFS
}

func (f gatedFile) Datasync() error {
	if f.g.armed.Load() {
		f.g.held <- struct{}{}
		<-f.g.open
	}
	return f.File.Datasync()
}

// A held log's commit is readable by ReadTo (Written), and wakes
// EndNotify, as soon as it is written and verified, while its fdatasync
// still runs; End, Release and the commit's answer wait for the sync.
func TestHeldCommitIsReadableBeforeItsSync(t *testing.T) {
	g := &gatedFS{FS: vfs.Default, held: make(chan struct{}), open: make(chan struct{})}
	l := openT(t, t.TempDir(), Options{Held: true, FS: g})
	defer l.Close()
	var opened sync.Once
	let := func() { // every Datasync through, now and after (also when the test fails)
		g.armed.Store(false)
		opened.Do(func() { close(g.open) })
	}
	defer let()
	moved := l.EndNotify()
	g.armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := l.Commit(recs("c", 3, false))
		done <- err
	}()
	<-g.held // the commit's fdatasync has begun
	if w, e := l.Written(), l.End(); w != 3 || e != 0 {
		t.Fatalf("during the commit's fdatasync: written %d, end %d; want 3 and 0", w, e)
	}
	select {
	case <-moved:
	default:
		t.Fatal("EndNotify did not fire when the commit was published")
	}
	got, err := l.ReadTo(0, 10, 1<<20)
	if err != nil || len(got) != 3 || string(got[2].Payload) != "c-2" {
		t.Fatalf("ReadTo during the fdatasync: %d records, %v; want c-0..c-2", len(got), err)
	}
	if err := l.Release(3); err != nil || l.HWM() != 0 {
		t.Fatalf("Release(3) before the fdatasync ended: %v, hwm %d; want hwm 0", err, l.HWM())
	}
	select {
	case err := <-done:
		t.Fatalf("the commit answered (%v) before its fdatasync ended", err)
	default:
	}
	let()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if e := l.End(); e != 3 {
		t.Fatalf("end %d after the commit returned, want 3", e)
	}
	if err := l.Release(3); err != nil || l.HWM() != 3 {
		t.Fatalf("Release(3) once durable: %v, hwm %d", err, l.HWM())
	}
}

// A held log's commit whose fdatasync fails after it was published: the
// commit fails, End stays, the log is fenced until reopened (followers
// may have copied the records: they are neither cut nor ever counted
// durable here), and the directory reopens as a log of what the disk
// kept — with the pages lost, the records before the commit.
func TestHeldCommitWhoseSyncFails(t *testing.T) {
	for _, lose := range []bool{false, true} {
		fsys := errorfs.New(vfs.Default)
		dir := t.TempDir()
		l := openT(t, dir, Options{Held: true, FS: fsys})
		if err := l.Append(leaderRecs(0, 1, 2)); err != nil {
			t.Fatal(err)
		}
		fsys.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.EIO, LoseUnsynced: lose})
		if _, err := l.Commit(recs("c", 2, false)); err == nil {
			t.Fatalf("lose %v: a commit whose fdatasync failed answered nil", lose)
		}
		fsys.Clear()
		if e, w := l.End(), l.Written(); e != 2 || w != 4 || !l.Fenced() || !l.LostPublished() {
			t.Fatalf("lose %v: after the failed sync end %d, written %d, fenced %v, lost published %v; want 2, 4, fenced, lost",
				lose, e, w, l.Fenced(), l.LostPublished())
		}
		if err := l.Release(4); err != nil || l.HWM() != 2 {
			t.Fatalf("lose %v: Release(4) after the failed sync: %v, hwm %d; want 2", lose, err, l.HWM())
		}
		if _, err := l.Commit(recs("d", 1, false)); err == nil || !errors.Is(err, l.failed) {
			t.Fatalf("lose %v: a commit on the fenced log: %v", lose, err)
		}
		if err := l.Recover(); err == nil {
			t.Fatalf("lose %v: Recover lifted the fence over records followers may have copied", lose)
		}
		l.Close()
		want := uint64(4)
		if lose {
			want = 2
		}
		r := openT(t, dir, Options{Held: true})
		if e := r.End(); e != want {
			t.Fatalf("lose %v: reopened with end %d, want %d", lose, e, want)
		}
		r.Close()
	}
}

// A held commit whose write fails is undone before anything is published:
// the log holds what it held, and nothing published was lost.
func TestHeldCommitWhoseWriteFailsLosesNothingPublished(t *testing.T) {
	fsys := errorfs.New(vfs.Default)
	l := openT(t, t.TempDir(), Options{Held: true, FS: fsys})
	defer l.Close()
	if err := l.Append(leaderRecs(0, 1, 2)); err != nil {
		t.Fatal(err)
	}
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: ".log", Times: 1, Err: syscall.ENOSPC})
	if _, err := l.Commit(recs("c", 2, false)); err == nil {
		t.Fatal("a commit whose write failed answered nil")
	}
	if e, w := l.End(), l.Written(); e != 2 || w != 2 || l.LostPublished() {
		t.Fatalf("after the failed write: end %d, written %d, lost published %v; want 2, 2, false", e, w, l.LostPublished())
	}
	if _, err := l.Commit(recs("d", 1, false)); err != nil {
		t.Fatalf("the next commit: %v", err)
	}
}
