package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/testutil"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// owner is a fake journal.Owner: it counts syncs and fails them on demand.
type owner struct {
	mu    sync.Mutex
	syncs int
	fail  error
}

func (o *owner) SyncJournaled() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.syncs++
	return o.fail
}

// durableFile creates root/rel, its directory entry durable, as a
// segment is before anything is journaled for it.
func durableFile(t *testing.T, fsys vfs.FS, root, rel string) vfs.File {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := vfs.MkdirAllDurable(fsys, filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir(filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// writeJournaled writes b at pos of f, unsynced, and journals it.
func writeJournaled(t *testing.T, j *Journal, o Owner, f vfs.File, pos int64, b []byte) {
	t.Helper()
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
	if err := j.Write(o, f.Name(), pos, b); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, fsys vfs.FS, root string, opts Options) *Journal {
	t.Helper()
	opts.FS = fsys
	j, err := Open(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func readAll(t *testing.T, fsys vfs.FS, path string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A power cut takes the unsynced writes of a file; the journal puts them
// back when it opens, and then holds nothing more.
func TestOpenPutsBackWritesAPowerCutTook(t *testing.T) {
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	j := open(t, fsys, root, Options{})
	f := durableFile(t, fsys, root, "topics/a/p00000/seg")
	o := &owner{}
	writeJournaled(t, j, o, f, 0, []byte("first "))
	writeJournaled(t, j, o, f, 6, []byte("second"))
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, fsys, f.Name()); len(got) != 0 {
		t.Fatalf("the power cut left %q in the file; the test needs it to take the writes", got)
	}
	j2 := open(t, fsys, root, Options{})
	defer j2.Close()
	if got := readAll(t, fsys, f.Name()); string(got) != "first second" {
		t.Fatalf("after replay the file holds %q, want %q", got, "first second")
	}
	// Replay fdatasynced the file: a second power cut keeps it.
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, fsys, f.Name()); string(got) != "first second" {
		t.Fatalf("replayed bytes were not made durable: %q", got)
	}
	nums, err := listFiles(fsys, filepath.Join(root, "journal"))
	if err != nil || len(nums) != 1 {
		t.Fatalf("journal files after open: %v (%v), want only the new one", nums, err)
	}
}

// A forget drops the writes before it: a cut file is not grown back by a
// replay, and writes after the forget still count.
func TestForgetDropsTheWritesBeforeIt(t *testing.T) {
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	j := open(t, fsys, root, Options{})
	f := durableFile(t, fsys, root, "topics/a/p00000/seg")
	other := durableFile(t, fsys, root, "topics/a/p00001/seg")
	o, o2 := &owner{}, &owner{}
	writeJournaled(t, j, o, f, 0, []byte("keep-cut-cut"))
	writeJournaled(t, j, o2, other, 0, []byte("other"))
	// The owner makes its file durable, forgets, then cuts it and writes
	// anew (a truncation of a divergent tail).
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	if !j.Live(filepath.Dir(f.Name())) {
		t.Fatal("a directory with journaled writes is not live")
	}
	if err := j.Forget(o, filepath.Dir(f.Name())); err != nil {
		t.Fatal(err)
	}
	if j.Live(filepath.Dir(f.Name())) {
		t.Fatal("a forgotten directory is still live")
	}
	if err := f.Truncate(4); err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	writeJournaled(t, j, o, f, 4, []byte("-new"))
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	j2 := open(t, fsys, root, Options{})
	defer j2.Close()
	if got := readAll(t, fsys, f.Name()); string(got) != "keep-new" {
		t.Fatalf("after replay the cut file holds %q, want %q", got, "keep-new")
	}
	if got := readAll(t, fsys, other.Name()); string(got) != "other" {
		t.Fatalf("another directory's write was lost to the forget: %q", got)
	}
}

// Replay never makes a file: one removed after its writes (retention, a
// removed directory) stays removed.
func TestReplayNeverCreatesAFile(t *testing.T) {
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	j := open(t, fsys, root, Options{})
	f := durableFile(t, fsys, root, "topics/a/p00000/seg")
	writeJournaled(t, j, &owner{}, f, 0, []byte("gone"))
	if err := fsys.Remove(f.Name()); err != nil {
		t.Fatal(err)
	}
	open(t, fsys, root, Options{}).Close()
	if _, err := fsys.Stat(f.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("replay made the removed file again (stat: %v)", err)
	}
}

// A torn entry at the end (a group whose fdatasync never returned) is
// left out; the entries before it are replayed.
func TestTornTailIsLeftOut(t *testing.T) {
	root := t.TempDir()
	fsys := vfs.Default
	j := open(t, fsys, root, Options{})
	f := durableFile(t, fsys, root, "topics/a/p00000/seg")
	writeJournaled(t, j, &owner{}, f, 0, []byte("whole"))
	j.Close()
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	torn := appendWrite(nil, "topics/a/p00000/seg", 5, []byte("torn"))
	jf := filepath.Join(root, "journal", fileName(1))
	g, err := os.OpenFile(jf, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	g.Write(torn[:len(torn)-1])
	g.Close()
	open(t, fsys, root, Options{}).Close()
	if got := readAll(t, fsys, f.Name()); string(got) != "whole" {
		t.Fatalf("after replay the file holds %q, want %q", got, "whole")
	}
}

// A journal naming a path outside the data directory is refused, and
// nothing is written there.
func TestReplayRefusesAPathOutsideTheDataDirectory(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "data")
	outside := filepath.Join(base, "outside")
	if err := os.WriteFile(outside, []byte("untouched"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := appendWrite(nil, "../outside", 0, []byte("written!!"))
	if err := os.WriteFile(filepath.Join(root, "journal", fileName(1)), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(root, Options{}); err == nil {
		t.Fatal("a journal writing outside the data directory opened")
	}
	if got, _ := os.ReadFile(outside); string(got) != "untouched" {
		t.Fatalf("the file outside the data directory now holds %q", got)
	}
	j := open(t, vfs.Default, t.TempDir(), Options{})
	defer j.Close()
	if err := j.Write(&owner{}, outside, 0, []byte("x")); err == nil {
		t.Fatal("Write took a path outside the journal's root")
	}
}

// A failed fdatasync fails the journal for good: the write is not
// acknowledged, and neither is any later one.
func TestAFailedSyncFailsTheJournalForGood(t *testing.T) {
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	j := open(t, fsys, root, Options{})
	defer j.Close()
	f := durableFile(t, fsys, root, "topics/a/p00000/seg")
	in := fsys.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".journal", Times: 1, Err: syscall.EIO})
	if err := j.Write(&owner{}, f.Name(), 0, []byte("x")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write over a failing fdatasync: %v, want EIO", err)
	}
	in.Remove()
	if err := j.Write(&owner{}, f.Name(), 0, []byte("x")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("write after a failed fdatasync: %v, want the same failure", err)
	}
}

// Writers that arrive while an fdatasync runs share the next one.
func TestWritersArrivingDuringASyncShareTheNext(t *testing.T) {
	root := t.TempDir()
	release := make(chan struct{})
	first := true
	j := open(t, vfs.Default, root, Options{Synced: func(time.Duration) {
		if first {
			first = false
			<-release
		}
	}})
	defer j.Close()
	f := durableFile(t, vfs.Default, root, "topics/a/p00000/seg")
	const writers = 8
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); j.Write(&owner{}, f.Name(), 0, []byte("first")) }()
	testutil.WaitFor(t, "the first write to hold the fdatasync", func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return j.syncing
	})
	for i := range writers {
		wg.Add(1)
		go func() { defer wg.Done(); j.Write(&owner{}, f.Name(), int64(i), []byte("x")) }()
	}
	one := len(appendWrite(nil, "topics/a/p00000/seg", 0, []byte("x")))
	testutil.WaitFor(t, "every writer to queue", func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return len(j.pending) == writers*one
	})
	close(release)
	wg.Wait()
	if got := j.Syncs(); got != 2 {
		t.Fatalf("%d fdatasyncs for one write and %d that queued behind it, want 2", got, writers)
	}
}

// Past MaxBytes the journal moves to a new file, has every owner with
// writes in the old one sync its files, and removes it; an owner that
// cannot sync keeps it, and it is replayed.
func TestRetirementSyncsOwnersThenRemovesTheFile(t *testing.T) {
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	j := open(t, fsys, root, Options{MaxBytes: 64})
	f := durableFile(t, fsys, root, "topics/a/p00000/seg")
	good, bad := &owner{}, &owner{fail: errors.New("disk gone")}
	writeJournaled(t, j, good, f, 0, bytes.Repeat([]byte("g"), 100)) // past MaxBytes: retires file 1
	j.wg.Wait()
	if good.syncs != 1 {
		t.Fatalf("the owner synced %d times at the retirement, want 1", good.syncs)
	}
	if _, err := fsys.Stat(filepath.Join(root, "journal", fileName(1))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the retired file is still there (stat: %v)", err)
	}
	g := durableFile(t, fsys, root, "topics/a/p00001/seg")
	writeJournaled(t, j, bad, g, 0, bytes.Repeat([]byte("b"), 100)) // retires file 2: bad fails
	j.wg.Wait()
	if _, err := fsys.Stat(filepath.Join(root, "journal", fileName(2))); err != nil {
		t.Fatalf("a file whose owner could not sync was removed (stat: %v)", err)
	}
	j.Close()
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	open(t, fsys, root, Options{}).Close()
	if got := readAll(t, fsys, g.Name()); !bytes.Equal(got, bytes.Repeat([]byte("b"), 100)) {
		t.Fatalf("the kept file's write was not put back: %q", got)
	}
}

// Restore puts back one directory's writes while the journal runs, and
// only while that directory is live.
func TestRestorePutsBackOneDirectory(t *testing.T) {
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	j := open(t, fsys, root, Options{})
	defer j.Close()
	f := durableFile(t, fsys, root, "topics/a/p00000/seg")
	other := durableFile(t, fsys, root, "topics/a/p00001/seg")
	writeJournaled(t, j, &owner{}, f, 0, []byte("mine"))
	writeJournaled(t, j, &owner{}, other, 0, []byte("theirs"))
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	if err := j.Restore(filepath.Dir(f.Name())); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, fsys, f.Name()); string(got) != "mine" {
		t.Fatalf("restored file holds %q, want %q", got, "mine")
	}
	if got := readAll(t, fsys, other.Name()); len(got) != 0 {
		t.Fatalf("Restore of one directory wrote another's file: %q", got)
	}
}

// The active file is filled with zeros ahead of its entries, so that an
// fdatasync does not also commit a new file size; replay stops at them.
func TestActiveFileIsZeroedAhead(t *testing.T) {
	root := t.TempDir()
	j := open(t, vfs.Default, root, Options{})
	f := durableFile(t, vfs.Default, root, "topics/a/p00000/seg")
	writeJournaled(t, j, &owner{}, f, 0, []byte("one"))
	fi, err := os.Stat(filepath.Join(root, "journal", fileName(1)))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != zeroChunk {
		t.Fatalf("the active file is %d bytes after one small write, want %d (zeroed ahead)", fi.Size(), zeroChunk)
	}
	writeJournaled(t, j, &owner{}, f, 3, []byte("two"))
	j.Close()
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	open(t, vfs.Default, root, Options{}).Close()
	if got := readAll(t, vfs.Default, f.Name()); string(got) != "onetwo" {
		t.Fatalf("replay over a zeroed file put back %q, want %q", got, "onetwo")
	}
}

// A write that fails part way (a full disk) is refused and cut off
// again: the journal goes on once space is back, and no byte of the
// failed write is left for a replay to read after the entries that
// follow it.
func TestAFailedWriteIsUndoneAndTheJournalGoesOn(t *testing.T) {
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	j := open(t, fsys, root, Options{})
	f := durableFile(t, fsys, root, "topics/a/p00000/seg")
	writeJournaled(t, j, &owner{}, f, 0, []byte("before"))
	full := fsys.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: ".journal", Err: syscall.ENOSPC, Torn: 0.9})
	if err := j.Write(&owner{}, f.Name(), 100, bytes.Repeat([]byte("L"), 300)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", err)
	}
	full.Remove()
	jf := filepath.Join(root, "journal", fileName(1))
	fi, err := os.Stat(jf)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(appendWrite(nil, "topics/a/p00000/seg", 0, []byte("before")))); fi.Size() != want {
		t.Fatalf("after the failed write the journal file is %d bytes, want %d: only the entry before it", fi.Size(), want)
	}
	writeJournaled(t, j, &owner{}, f, 6, []byte("-after"))
	j.Close()
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	open(t, fsys, root, Options{}).Close()
	if got := readAll(t, fsys, f.Name()); string(got) != "before-after" {
		t.Fatalf("after replay the file holds %q, want %q", got, "before-after")
	}
}

// A closed journal takes no more writes: its file is closed, and
// nothing may be written through its descriptor again.
func TestAClosedJournalRefusesWrites(t *testing.T) {
	root := t.TempDir()
	j := open(t, vfs.Default, root, Options{})
	f := durableFile(t, vfs.Default, root, "topics/a/p00000/seg")
	j.Close()
	if err := j.Write(&owner{}, f.Name(), 0, []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("write to a closed journal: %v, want ErrClosed", err)
	}
	if err := j.Forget(&owner{}, filepath.Dir(f.Name())); err != nil {
		t.Fatalf("forget of a directory with nothing journaled, after Close: %v, want nil", err)
	}
}

// With Delay, the write that finds no sync in flight waits before it
// writes, once, and the writes arriving meanwhile share its fdatasync: one
// sync for all of them. A Close during the wait waits for that sync.
func TestADelayedSyncCarriesTheWritesArrivingMeanwhile(t *testing.T) {
	root := t.TempDir()
	waiting, release := make(chan time.Duration, 4), make(chan struct{})
	j := open(t, vfs.Default, root, Options{Delay: 300 * time.Microsecond, sleep: func(d time.Duration) {
		waiting <- d
		<-release
	}})
	f := durableFile(t, vfs.Default, root, "topics/a/p00000/seg")
	const writers = 8
	errs := make(chan error, writers+1)
	go func() { errs <- j.Write(&owner{}, f.Name(), 0, []byte("first")) }()
	if d := <-waiting; d != 300*time.Microsecond {
		t.Fatalf("the first write waited %v, want the Delay", d)
	}
	for i := range writers {
		go func() { errs <- j.Write(&owner{}, f.Name(), int64(i), []byte("x")) }()
	}
	first := len(appendWrite(nil, "topics/a/p00000/seg", 0, []byte("first")))
	one := len(appendWrite(nil, "topics/a/p00000/seg", 0, []byte("x")))
	testutil.WaitFor(t, "every writer to join the delayed sync", func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return len(j.pending) == first+writers*one
	})
	closed := make(chan error, 1)
	go func() { closed <- j.Close() }()
	close(release)
	for range writers + 1 {
		if err := <-errs; err != nil {
			t.Fatalf("a write that joined the delayed sync: %v", err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if got := j.Syncs(); got != 1 {
		t.Fatalf("%d fdatasyncs for %d writes that met during the delay, want 1", got, writers+1)
	}
	select {
	case d := <-waiting:
		t.Fatalf("a second wait of %v: only the group's first write waits", d)
	default:
	}
}

// Without Delay no write waits.
func TestNoDelayByDefault(t *testing.T) {
	root := t.TempDir()
	j := open(t, vfs.Default, root, Options{sleep: func(d time.Duration) {
		t.Errorf("a write waited %v with no Delay set", d)
	}})
	defer j.Close()
	f := durableFile(t, vfs.Default, root, "topics/a/p00000/seg")
	for i := range 3 {
		writeJournaled(t, j, &owner{}, f, int64(i), []byte("x"))
	}
	if got := j.Syncs(); got != 3 {
		t.Fatalf("%d fdatasyncs for 3 writes one after another, want 3", got)
	}
}
