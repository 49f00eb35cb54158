package errorfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Directory entries. A created file or directory, or a rename's new name,
// survives a power cut only once its parent directory has been fsynced
// (SyncDir) after the change — POSIX promises nothing before, whatever
// ext4 and XFS happen to order. The FS notes every entry it creates and
// forgets it when its parent is synced; UnsyncedEntries lists what a
// power cut could still take away. (LoseUnsyncedWrites models file
// contents only.)
type dirEntries struct {
	mu      sync.Mutex
	pending map[string]bool // path → created or renamed into place, parent not synced since
}

func (d *dirEntries) note(paths ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending == nil {
		d.pending = map[string]bool{}
	}
	for _, p := range paths {
		d.pending[filepath.Clean(p)] = true
	}
}

func (d *dirEntries) synced(dir string) {
	dir = filepath.Clean(dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	for p := range d.pending {
		if filepath.Dir(p) == dir {
			delete(d.pending, p)
		}
	}
}

// forget drops entries at or under path (it was removed).
func (d *dirEntries) forget(path string) {
	path = filepath.Clean(path)
	d.mu.Lock()
	defer d.mu.Unlock()
	for p := range d.pending {
		if p == path || isUnder(p, path) {
			delete(d.pending, p)
		}
	}
}

// isUnder reports whether p lies below dir (both clean).
func isUnder(p, dir string) bool {
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// UnsyncedEntries lists, sorted, the entries at or under root created or
// renamed into place since their parent directory was last synced: what
// a power cut could still remove.
func (f *FS) UnsyncedEntries(root string) []string {
	root = filepath.Clean(root)
	f.dirs.mu.Lock()
	defer f.dirs.mu.Unlock()
	var out []string
	for p := range f.dirs.pending {
		if p == root || isUnder(p, root) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// creates reports whether opening name with flag creates it.
func (f *FS) creates(name string, flag int) bool {
	if flag&os.O_CREATE == 0 {
		return false
	}
	_, err := f.inner.Stat(name)
	return errors.Is(err, fs.ErrNotExist)
}
