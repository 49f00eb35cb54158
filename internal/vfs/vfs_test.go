package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDefaultRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "f")
	if err := Default.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := Create(Default, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("hello world"), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(5); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Default.SyncDir(filepath.Dir(p)); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(Default, p)
	if err != nil || string(got) != "hello" {
		t.Fatalf("ReadFile = %q, %v; want hello", got, err)
	}
	if err := Default.Rename(p, p+"2"); err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old name still there after rename: %v", err)
	}
}

func TestLockIsExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "LOCK")
	l, err := Default.Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Lock(p); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock = %v, want ErrLocked", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := Default.Lock(p)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	l2.Close()
}

func TestOrDefaultsNil(t *testing.T) {
	if Or(nil) != Default {
		t.Fatal("Or(nil) is not Default")
	}
	var other FS = osFS{}
	if Or(other) != other {
		t.Fatal("Or(fs) did not return fs")
	}
}

// TestDatasyncAfterCloseFails: a closed file's Datasync is refused with
// os.ErrClosed, even when its descriptor number was reused by a file
// opened since: it must never sync that other file and report success.
func TestDatasyncAfterCloseFails(t *testing.T) {
	dir := t.TempDir()
	f, err := Default.OpenFile(filepath.Join(dir, "a"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Datasync(); err != nil {
		t.Fatalf("open file: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := Default.OpenFile(filepath.Join(dir, "b"), os.O_RDWR|os.O_CREATE, 0o644) // likely takes a's number
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := f.Datasync(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Datasync after Close = %v, want os.ErrClosed", err)
	}
}
