package errorfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
)

func open(t *testing.T, fsys vfs.FS, p string) vfs.File {
	t.Helper()
	f, err := vfs.Create(fsys, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestAfterAndTimes(t *testing.T) {
	fsys := New(vfs.Default)
	f := open(t, fsys, filepath.Join(t.TempDir(), "seg"))
	in := fsys.Inject(Rule{Ops: OpSync, Path: "seg", After: 2, Times: 1, Err: syscall.EIO})
	for i, want := range []error{nil, nil, syscall.EIO, nil} {
		err := f.Datasync()
		if !errors.Is(err, want) || (want == nil && err != nil) {
			t.Fatalf("sync %d = %v, want %v", i, err, want)
		}
	}
	if in.Fired() != 1 {
		t.Fatalf("Fired = %d, want 1", in.Fired())
	}
}

func TestStickyUntilRemoved(t *testing.T) {
	fsys := New(vfs.Default)
	f := open(t, fsys, filepath.Join(t.TempDir(), "wal"))
	in := fsys.Inject(Rule{Ops: OpWrite, Err: syscall.ENOSPC})
	for i := 0; i < 3; i++ {
		if _, err := f.Write([]byte("x")); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("write %d = %v, want ENOSPC", i, err)
		}
	}
	in.Remove()
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatalf("write after Remove: %v", err)
	}
}

func TestPathFilter(t *testing.T) {
	fsys := New(vfs.Default)
	dir := t.TempDir()
	a, b := open(t, fsys, filepath.Join(dir, "a.log")), open(t, fsys, filepath.Join(dir, "hwm"))
	fsys.Inject(Rule{Ops: OpWrite, Path: "hwm", Err: syscall.EIO})
	if _, err := a.WriteAt([]byte("ok"), 0); err != nil {
		t.Fatalf("unmatched path failed: %v", err)
	}
	if _, err := b.WriteAt([]byte("no"), 0); !errors.Is(err, syscall.EIO) {
		t.Fatalf("matched path = %v, want EIO", err)
	}
}

func TestTornWrite(t *testing.T) {
	fsys := New(vfs.Default)
	p := filepath.Join(t.TempDir(), "seg")
	f := open(t, fsys, p)
	fsys.Inject(Rule{Ops: OpWrite, Times: 1, Torn: 0.5, Err: syscall.ENOSPC})
	n, err := f.WriteAt([]byte("abcdefgh"), 0)
	if n != 4 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("torn write = %d, %v; want 4, ENOSPC", n, err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "abcd" {
		t.Fatalf("file holds %q, want the torn half abcd", got)
	}
}

func TestLoseUnsynced(t *testing.T) {
	fsys := New(vfs.Default)
	p := filepath.Join(t.TempDir(), "seg")
	f := open(t, fsys, p)
	if _, err := f.Write([]byte("durable")); err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("-lost")); err != nil {
		t.Fatal(err)
	}
	fsys.Inject(Rule{Ops: OpSync, Times: 1, LoseUnsynced: true, Err: syscall.EIO})
	if err := f.Datasync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync = %v, want EIO", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "durable" {
		t.Fatalf("after a lost sync the file holds %q, want only the synced bytes", got)
	}
}

func TestRenameMatchesEitherPath(t *testing.T) {
	fsys := New(vfs.Default)
	dir := t.TempDir()
	src := filepath.Join(dir, "checkpoint.tmp")
	open(t, fsys, src)
	fsys.Inject(Rule{Ops: OpRename, Path: "/checkpoint", Times: 1, Err: syscall.EIO})
	if err := fsys.Rename(src, filepath.Join(dir, "checkpoint")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("rename = %v, want EIO", err)
	}
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("a failed rename moved the file: %v", err)
	}
}

func TestOpenAndReadFaults(t *testing.T) {
	fsys := New(vfs.Default)
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := fsys.Inject(Rule{Ops: OpRead, Err: syscall.EIO})
	if _, err := vfs.ReadFile(fsys, p); !errors.Is(err, syscall.EIO) {
		t.Fatalf("read = %v, want EIO", err)
	}
	in.Remove()
	fsys.Inject(Rule{Ops: OpOpen, Times: 1, Err: syscall.EMFILE})
	if _, err := vfs.Open(fsys, p); !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("open = %v, want EMFILE", err)
	}
	if b, err := vfs.ReadFile(fsys, p); err != nil || string(b) != "data" {
		t.Fatalf("after the fault: %q, %v", b, err)
	}
}

func TestCorruptReadSucceedsWithOtherBytes(t *testing.T) {
	fsys := New(vfs.Default)
	f := open(t, fsys, filepath.Join(t.TempDir(), "seg"))
	if _, err := f.WriteAt([]byte("abc"), 0); err != nil {
		t.Fatal(err)
	}
	in := fsys.Inject(Rule{Ops: OpRead, Path: "seg", Times: 1, Corrupt: true})
	got := make([]byte, 3)
	if _, err := f.ReadAt(got, 0); err != nil || string(got) == "abc" {
		t.Fatalf("corrupt read = %q, %v; want other bytes and no error", got, err)
	}
	if _, err := f.ReadAt(got, 0); err != nil || string(got) != "abc" {
		t.Fatalf("read after the rule spent = %q, %v", got, err)
	}
	if in.Fired() != 1 {
		t.Fatalf("Fired = %d", in.Fired())
	}
}

// CorruptAt picks the byte whose bit a Corrupt rule flips, so the bytes
// before it read back right; past what the read returned, the last one.
func TestCorruptAtFlipsThatByte(t *testing.T) {
	fsys := New(vfs.Default)
	f := open(t, fsys, filepath.Join(t.TempDir(), "seg"))
	if _, err := f.WriteAt([]byte("abc"), 0); err != nil {
		t.Fatal(err)
	}
	for at, want := range map[int]string{1: "acc", 9: "abb"} { // 'b'^1 is 'c', 'c'^1 is 'b'
		fsys.Inject(Rule{Ops: OpRead, Path: "seg", Times: 1, Corrupt: true, CorruptAt: at})
		got := make([]byte, 3)
		if _, err := f.ReadAt(got, 0); err != nil || string(got) != want {
			t.Fatalf("CorruptAt %d: read %q, %v; want %q", at, got, err, want)
		}
	}
}
