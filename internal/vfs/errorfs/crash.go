package errorfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Power loss: LoseUnsyncedWrites undoes every write no successful sync
// covered, the way a crash loses the page cache's dirty pages. It is what
// tells "written" from "durable": a test writes through the FS, drops what
// was not synced, and reads what a restarted process would find.
//
// What it models: bytes written with WriteAt since the file's last
// successful Sync or Datasync go back to what they were, and a file that
// grew since then is cut back to its size at that sync (appends with
// Write are lost that way). What it does not: directory entries (a
// rename or create not followed by SyncDir survives), and writes made
// through another FS than this one.

// journal is the unsynced state of the files written through this FS, by
// path.
type journal struct {
	mu    sync.Mutex
	files map[string]*unsynced
}

// unsynced is one file's writes since its last successful sync.
type unsynced struct {
	size int64  // at the last sync (or when first opened here)
	undo []undo // in write order
}

type undo struct {
	off int64
	old []byte // the bytes the write replaced (shorter past the old end)
}

// opened notes a file opened through the FS at its current size, unless
// it is already known (a second handle must not forget the first's
// unsynced writes).
func (j *journal) opened(name string, size int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.files == nil {
		j.files = map[string]*unsynced{}
	}
	if _, ok := j.files[name]; !ok {
		j.files[name] = &unsynced{size: size}
	}
}

func (j *journal) wrote(name string, off int64, old []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if u, ok := j.files[name]; ok {
		u.undo = append(u.undo, undo{off: off, old: old})
	}
}

func (j *journal) synced(name string, size int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if u, ok := j.files[name]; ok {
		u.size, u.undo = size, nil
	}
}

// removed drops what is known of the files at or under path: a removed
// file's unsynced writes went with it, and a file made later under the
// same name starts afresh (a power cut must not write the old file's
// bytes into it).
func (j *journal) removed(path string) {
	path = filepath.Clean(path)
	j.mu.Lock()
	defer j.mu.Unlock()
	for p := range j.files {
		if c := filepath.Clean(p); c == path || isUnder(c, path) {
			delete(j.files, p)
		}
	}
}

// before returns the bytes a WriteAt of n bytes at off is about to replace.
func before(f *file, off int64, n int) []byte {
	old := make([]byte, n)
	k, _ := f.File.ReadAt(old, off)
	return old[:k]
}

// LoseUnsyncedWrites drops, from every file written through f, what no
// successful sync made durable (see the comment above). Afterwards the
// files are as a process restarted after a power cut would find them, and
// every file counts as synced.
func (f *FS) LoseUnsyncedWrites() error {
	f.journal.mu.Lock()
	defer f.journal.mu.Unlock()
	var errs []error
	for name, u := range f.journal.files {
		if err := u.revert(f, name); err != nil {
			errs = append(errs, err)
		}
	}
	f.journal.files = nil
	return errors.Join(errs...)
}

func (u *unsynced) revert(f *FS, name string) error {
	fi, err := f.inner.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed since: nothing to lose
	}
	if err != nil {
		return err
	}
	if len(u.undo) == 0 && fi.Size() <= u.size {
		return nil
	}
	h, err := f.inner.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer h.Close()
	for i := len(u.undo) - 1; i >= 0; i-- {
		if _, err := h.WriteAt(u.undo[i].old, u.undo[i].off); err != nil {
			return err
		}
	}
	if fi.Size() > u.size {
		return h.Truncate(u.size)
	}
	return nil
}
