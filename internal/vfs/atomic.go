package vfs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
)

// WriteFileAtomic replaces path with data so that a crash leaves either
// the old file or the new one, never a mix: a temp file beside it
// (<name>.tmp<random>), written and fsynced, renamed over path, then the
// directory fsynced so the rename itself is durable.
//
// On an error before the rename, the temp file is removed and path is as
// it was. An error from the directory fsync comes after the rename: path
// already holds data for readers, but whether the rename survives a crash
// is unknown, so the caller must treat the write as not done (and may
// simply repeat it: the operation is idempotent).
func WriteFileAtomic(fsys FS, path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := fsys.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		fsys.Remove(tmp)
		return err
	}
	return fsys.SyncDir(dir)
}

// MkdirAllDurable is MkdirAll whose new directories survive a power cut:
// each level it creates is followed by an fsync of its parent, so a file
// later made durable inside the last one is not lost with a directory
// entry that never reached the disk (POSIX makes an entry durable only
// with its parent's fsync). Levels that exist already cost one Stat each.
func MkdirAllDurable(fsys FS, path string, perm fs.FileMode) error {
	missing, err := MissingDirs(fsys, path)
	if err != nil {
		return err
	}
	for _, dir := range missing {
		if err := fsys.MkdirAll(dir, perm); err != nil {
			return err
		}
		if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
			return err
		}
	}
	return nil
}

// MissingDirs lists the directories MkdirAll(path) would create, top
// first.
func MissingDirs(fsys FS, path string) ([]string, error) {
	var missing []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := fsys.Stat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	slices.Reverse(missing)
	return missing, nil
}
