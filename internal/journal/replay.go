package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/narad-io/narad/internal/vfs"
)

const suffix = ".journal"

// fileName is the name of journal file number n.
func fileName(n uint64) string { return fmt.Sprintf("%020d%s", n, suffix) }

// listFiles returns the numbers of the journal files in dir, ascending.
func listFiles(fsys vfs.FS, dir string) ([]uint64, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), suffix)
		if !ok || e.IsDir() {
			continue
		}
		n, err := strconv.ParseUint(name, 10, 64)
		if err != nil || fileName(n) != e.Name() {
			continue
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// readEntries reads a journal file's intact entries, up to limit bytes
// (-1: all of it). The entries alias the bytes read.
func readEntries(fsys vfs.FS, path string, limit int64) ([]entry, error) {
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return nil, err
	}
	if limit >= 0 && int64(len(b)) > limit {
		b = b[:limit]
	}
	var out []entry
	for len(b) > 0 {
		e, n, err := decode(b)
		if errors.Is(err, errTorn) {
			break // the tail of a group that was never acknowledged
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, e)
		b = b[n:]
	}
	return out, nil
}

// live keeps the writes of entries that no later forget of their
// directory covers, in order; with only, just those to files in that
// directory.
func live(entries []entry, only string) []entry {
	last := map[string]int{} // directory → index of its last forget
	for i, e := range entries {
		if e.kind == kindForget {
			last[e.path] = i
		}
	}
	var out []entry
	for i, e := range entries {
		if e.kind != kindWrite {
			continue
		}
		dir := filepath.Dir(e.path)
		if only != "" && dir != only {
			continue
		}
		if f, ok := last[dir]; ok && f > i {
			continue
		}
		out = append(out, e)
	}
	return out
}

// apply puts writes back into the files they name under root, in order,
// and fdatasyncs each file written. A file that does not exist is left
// alone: it was removed after its writes (retention, or a directory
// removed once its log was closed and forgotten), and a journal never
// creates files. It returns how many writes and bytes it put back.
func apply(fsys vfs.FS, root string, writes []entry) (n int, bytes int64, err error) {
	open := map[string]vfs.File{}
	defer func() {
		for _, f := range open {
			if f != nil {
				f.Close()
			}
		}
	}()
	var order []string
	for _, e := range writes {
		if !filepath.IsLocal(e.path) {
			return n, bytes, fmt.Errorf("journal: a write names %q, which is not a path inside the data directory", e.path)
		}
		f, seen := open[e.path]
		if !seen {
			f, err = fsys.OpenFile(filepath.Join(root, e.path), os.O_RDWR, 0)
			if errors.Is(err, fs.ErrNotExist) {
				open[e.path] = nil
				continue
			}
			if err != nil {
				return n, bytes, err
			}
			open[e.path] = f
			order = append(order, e.path)
		}
		if f == nil {
			continue
		}
		if _, err := f.WriteAt(e.data, e.pos); err != nil {
			return n, bytes, fmt.Errorf("journal: put back %d bytes at %d of %s: %w", len(e.data), e.pos, e.path, err)
		}
		n, bytes = n+1, bytes+int64(len(e.data))
	}
	for _, p := range order {
		if err := open[p].Datasync(); err != nil {
			return n, bytes, fmt.Errorf("journal: fdatasync %s after putting its writes back: %w", p, err)
		}
	}
	return n, bytes, nil
}
