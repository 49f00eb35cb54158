package errorfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
)

// A power cut keeps what a sync made durable and loses the rest: in-place
// writes since the last sync go back to the synced bytes, and appends are
// cut off; a file whose writes were all synced is untouched.
func TestLoseUnsyncedWrites(t *testing.T) {
	fsys := New(vfs.Default)
	dir := t.TempDir()
	inPlace, appended, clean := filepath.Join(dir, "cursor"), filepath.Join(dir, "log"), filepath.Join(dir, "synced")
	for _, p := range []string{inPlace, appended, clean} {
		f := open(t, fsys, p)
		if _, err := f.WriteAt([]byte("AAAA"), 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Datasync(); err != nil {
			t.Fatal(err)
		}
	}
	f, err := fsys.OpenFile(inPlace, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteAt([]byte("BB"), 1) // never synced
	f.WriteAt([]byte("C"), 0)  // never synced either
	g, err := fsys.OpenFile(appended, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.Write([]byte("tail"))
	h, err := fsys.OpenFile(clean, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.WriteAt([]byte("DD"), 2)
	if err := h.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{inPlace: "AAAA", appended: "AAAA", clean: "AADD"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s after the power cut: %q, want %q", filepath.Base(p), got, want)
		}
	}
}

// A removed file's unsynced writes go with it: a file made later under
// the same name loses its own unsynced writes, and never gets the old
// file's bytes or size instead.
func TestLoseUnsyncedWritesForgetsRemovedFiles(t *testing.T) {
	fsys := New(vfs.Default)
	dir := t.TempDir()
	p := filepath.Join(dir, "seg")
	old := open(t, fsys, p)
	if _, err := old.WriteAt([]byte("old-synced"), 0); err != nil {
		t.Fatal(err)
	}
	if err := old.Datasync(); err != nil {
		t.Fatal(err)
	}
	old.WriteAt([]byte("OLD"), 0) // never synced
	old.Close()
	if err := fsys.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := open(t, fsys, p)
	defer f.Close()
	f.WriteAt([]byte("new"), 0) // never synced
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); len(got) != 0 {
		t.Fatalf("after the power cut the new file holds %q, want nothing", got)
	}
}
