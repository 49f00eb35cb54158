package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/narad-io/narad/internal/vfs"
)

// A partition directory as a whole: its name, the listing a copy takes,
// and reading one of its files. What lies above the directory (the topic
// directories) belongs to the caller; copying one to another node is
// stage.go's.

// PartitionDirName is the name of partition p's directory: "p" and five
// digits. Every path to a partition directory is built with it.
func PartitionDirName(p int) string { return fmt.Sprintf("p%05d", p) }

// ParsePartitionDirName is PartitionDirName's inverse: ok only for "p"
// and exactly five digits.
func ParsePartitionDirName(name string) (p int, ok bool) {
	if len(name) != 6 || name[0] != 'p' {
		return 0, false
	}
	for _, c := range name[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		p = p*10 + int(c-'0')
	}
	return p, true
}

// PartitionDirs lists the partitions that have a directory under dir,
// ascending. A missing dir has none.
func PartitionDirs(fsys vfs.FS, dir string) ([]int, error) {
	ents, err := vfs.Or(fsys).ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if p, ok := ParsePartitionDirName(e.Name()); ok && e.IsDir() {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out, nil
}

// IsFileName reports whether name is a plain file name: nothing built from
// it can reach outside the directory it is joined to.
func IsFileName(name string) bool {
	return name != "" && name == filepath.Base(name) && name != "." && name != ".."
}

// PartitionFile is one file of a partition directory as a copy takes it.
type PartitionFile struct {
	Name string
	Size int64
}

// Files lists the log's directory for a copy, by name: every regular file
// except the temporaries of atomic writes (name.tmp<random>, renamed away
// at any moment), the active segment only up to its published bytes
// (Published). Sealed segments never change and the active one only grows
// past that size, so a copy may fetch each file from the size it already
// holds.
func (l *Log) Files() ([]PartitionFile, error) {
	active, published := l.Published() // before the listing: the segment only grows after
	ents, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	var out []PartitionFile
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.Contains(e.Name(), ".tmp") {
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted meanwhile (retention)
		}
		if err != nil {
			// Not a shorter list: a copy missing a file it should hold
			// would be installed, and its source deleted, without it.
			return nil, err
		}
		size := fi.Size()
		if e.Name() == active {
			size = min(size, published) // only verified frames
		}
		out = append(out, PartitionFile{Name: e.Name(), Size: size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ReadFileAt reads up to n bytes at off of the file name in dir; fewer at
// the file's end. name must be a plain file name (IsFileName). A missing
// file is an error satisfying errors.Is(err, os.ErrNotExist).
func ReadFileAt(fsys vfs.FS, dir, name string, off, n int64) ([]byte, error) {
	if !IsFileName(name) {
		return nil, fmt.Errorf("%q is not a file name", name)
	}
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("read %s: negative offset %d or length %d", name, off, n)
	}
	f, err := vfs.Open(vfs.Or(fsys), filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:k], nil
}

// RemoveDir deletes a partition directory and makes the deletion durable
// (its parent fsynced). The caller closed any log open on it.
func RemoveDir(fsys vfs.FS, dir string) error {
	fsys = vfs.Or(fsys)
	if err := fsys.RemoveAll(dir); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(dir))
}
