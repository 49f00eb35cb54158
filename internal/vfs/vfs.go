package vfs

import (
	"io"
	"io/fs"
	"os"
)

// File is an open file of an FS.
type File interface {
	io.Reader
	io.Writer
	io.ReaderAt
	io.WriterAt
	io.Closer
	Name() string
	Stat() (fs.FileInfo, error)
	Truncate(size int64) error
	// Sync is fsync(2): data and every piece of metadata.
	Sync() error
	// Datasync is fdatasync(2): data, and the size when it changed.
	Datasync() error
}

// FS is the set of filesystem calls the durable packages make.
type FS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// CreateTemp is os.CreateTemp: a new file in dir named by pattern.
	CreateTemp(dir, pattern string) (File, error)
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldpath, newpath string) error
	MkdirAll(name string, perm fs.FileMode) error
	ReadDir(name string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
	// SyncDir fsyncs the directory name, making its entries durable.
	SyncDir(name string) error
	// Lock takes an exclusive advisory lock on the file name (created if
	// missing) without waiting; ErrLocked when another holder has it.
	// Closing the returned value releases it.
	Lock(name string) (io.Closer, error)
}

// Default is the operating system's filesystem.
var Default FS = osFS{}

// Or returns fsys, or Default when fsys is nil: the packages' options take
// a nil FS to mean the real disk.
func Or(fsys FS) FS {
	if fsys == nil {
		return Default
	}
	return fsys
}

// Open opens name read-only.
func Open(fsys FS, name string) (File, error) {
	return fsys.OpenFile(name, os.O_RDONLY, 0)
}

// Create creates or truncates name for writing.
func Create(fsys FS, name string) (File, error) {
	return fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// ReadFile reads the whole of name, as os.ReadFile.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := Open(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
