package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/narad-io/narad/internal/vfs"
)

// ConsumerOffsetFile is the name of the consumer frontier file in a
// partition directory.
const ConsumerOffsetFile = "consumer.offset"

// WriteOffsetFile durably replaces path with v as 8 big-endian bytes: write a
// temp file, fsync it, rename it over path, fsync the directory. A crash
// leaves either the old value or the new one, never a mix.
func WriteOffsetFile(path string, v uint64) error { return WriteOffsetFileFS(vfs.Default, path, v) }

// WriteOffsetFileFS is WriteOffsetFile through fsys.
func WriteOffsetFileFS(fsys vfs.FS, path string, v uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return WriteFileAtomicFS(fsys, path, b[:])
}

// ReadOffsetFile reads a file written by WriteOffsetFile. ok is false when
// the file does not exist.
func ReadOffsetFile(path string) (v uint64, ok bool, err error) {
	return ReadOffsetFileFS(vfs.Default, path)
}

// ReadOffsetFileFS is ReadOffsetFile through fsys.
func ReadOffsetFileFS(fsys vfs.FS, path string) (v uint64, ok bool, err error) {
	b, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if len(b) != 8 {
		return 0, false, fmt.Errorf("%s: %d bytes, want 8", path, len(b))
	}
	return binary.BigEndian.Uint64(b), true, nil
}

// WriteFileAtomic is the temp + fsync + rename + directory fsync idiom, for
// sibling files of a partition (the fan-out cursor's first anchor, for
// instance).
func WriteFileAtomic(path string, data []byte) error {
	return WriteFileAtomicFS(vfs.Default, path, data)
}

// WriteFileAtomicFS is WriteFileAtomic through fsys. Every attempt writes a
// fresh temp file, so a failed write or fsync dooms only that temp file
// (removed), never the file it would have replaced: the next attempt
// starts clean, and there is nothing to fence.
func WriteFileAtomicFS(fsys vfs.FS, path string, data []byte) error {
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
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		fsys.Remove(tmp)
		return err
	}
	return fsys.SyncDir(dir)
}
