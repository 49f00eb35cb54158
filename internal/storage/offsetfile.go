package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

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
	// A fresh temp file per attempt: a failed write or fsync dooms only
	// that temp file, never the file it would replace, so there is
	// nothing to fence and the next attempt starts clean.
	return vfs.WriteFileAtomic(fsys, path, b[:])
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
