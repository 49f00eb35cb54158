package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrLocked is returned by Lock when the lock is held elsewhere.
var ErrLocked = errors.New("vfs: file is locked by another process")

type osFS struct{}

// osFile adds fdatasync to an *os.File. It reaches the descriptor
// through the file's syscall.RawConn, as the file's own methods do, and
// never keeps the number: a Datasync after Close then fails with
// os.ErrClosed, where a kept number may since name another file, whose
// sync would "succeed" for this one.
type osFile struct {
	*os.File
	raw syscall.RawConn
}

func wrap(f *os.File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &osFile{File: f, raw: raw}, nil
}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return wrap(os.OpenFile(name, flag, perm))
}

func (osFS) CreateTemp(dir, pattern string) (File, error) { return wrap(os.CreateTemp(dir, pattern)) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                  { return os.RemoveAll(name) }
func (osFS) Rename(o, n string) error                     { return os.Rename(o, n) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error {
	return os.MkdirAll(name, perm)
}
func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (osFS) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return f, nil // closing the descriptor drops the flock
}

func (f *osFile) Datasync() error {
	var err error
	if f.raw.Control(func(fd uintptr) { err = unix.Fdatasync(int(fd)) }) != nil {
		// Control fails only for a file closed (or closing): worded as
		// the file's own methods word it.
		return &fs.PathError{Op: "fdatasync", Path: f.Name(), Err: os.ErrClosed}
	}
	return err
}
