package vfs

import (
	"errors"
	"path/filepath"
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
