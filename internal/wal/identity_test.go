package wal

import (
	"os"
	"path/filepath"
	"testing"
)

// The identity is created once, survives reopening, differs between
// WALs, and a damaged identity file refuses the open (a guessed identity
// could make partition logs skip records of this WAL).
func TestIdentityIsStableAndDistinct(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	open := func(d string) *WAL {
		w, err := Open(d, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := open(dir)
	id := w.Identity()
	w.Close()
	w = open(dir)
	if w.Identity() != id || id == 0 {
		t.Fatalf("identity %x then %x", id, w.Identity())
	}
	w.Close()
	o := open(other)
	if o.Identity() == id {
		t.Fatal("two WALs share an identity")
	}
	o.Close()
	if err := os.WriteFile(filepath.Join(dir, identityName), []byte("short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w, err := Open(dir, Options{}); err == nil {
		w.Close()
		t.Fatal("damaged identity file accepted")
	}
}
