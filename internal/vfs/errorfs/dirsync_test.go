package errorfs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
)

// TestUnsyncedEntries: every entry created (mkdir, create, rename's new
// name) is listed until its parent is synced; a removal forgets it.
func TestUnsyncedEntries(t *testing.T) {
	root := t.TempDir()
	f := New(vfs.Default)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "a", "b")
	if err := f.MkdirAll(b, 0o755); err != nil {
		t.Fatal(err)
	}
	file, err := f.OpenFile(filepath.Join(b, "x"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	file.Close()
	if err := f.Rename(filepath.Join(b, "x"), filepath.Join(b, "y")); err != nil {
		t.Fatal(err)
	}
	want := []string{a, b, filepath.Join(b, "y")}
	if got := f.UnsyncedEntries(root); !slices.Equal(got, want) {
		t.Fatalf("unsynced %v, want %v", got, want)
	}
	if err := f.SyncDir(b); err != nil {
		t.Fatal(err)
	}
	if got := f.UnsyncedEntries(root); !slices.Equal(got, want[:2]) {
		t.Fatalf("after syncing %s: %v, want %v", b, got, want[:2])
	}
	if err := f.RemoveAll(a); err != nil {
		t.Fatal(err)
	}
	if got := f.UnsyncedEntries(root); len(got) != 0 {
		t.Fatalf("after removing %s: %v", a, got)
	}
}

// TestMkdirAllDurable: each level it creates is synced into its parent;
// plain MkdirAll leaves them all to a power cut.
func TestMkdirAllDurable(t *testing.T) {
	root := t.TempDir()
	f := New(vfs.Default)
	deep := filepath.Join(root, "topics", "orders", "p00000")
	if err := f.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := f.UnsyncedEntries(root); len(got) != 3 {
		t.Fatalf("plain MkdirAll: unsynced %v, want its three levels", got)
	}
	if err := f.RemoveAll(filepath.Join(root, "topics")); err != nil {
		t.Fatal(err)
	}
	if err := vfs.MkdirAllDurable(f, deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := f.UnsyncedEntries(root); len(got) != 0 {
		t.Fatalf("MkdirAllDurable left %v unsynced", got)
	}
	if err := vfs.MkdirAllDurable(f, deep, 0o755); err != nil { // exists: nothing to do
		t.Fatal(err)
	}
}
