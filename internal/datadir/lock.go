package datadir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/narad-io/narad/internal/vfs"
)

// LockFile is the file under the data directory whose flock marks it in
// use; it holds the pid of the process that has it.
const LockFile = "LOCK"

// Lock claims dir for this process until the returned Closer is closed or
// the process ends (the kernel drops a flock with its holder, so a killed
// node leaves no stale lock: only the pid in the file stays behind, and the
// next holder overwrites it). A second process on the same directory gets
// an error naming the holder's pid, at once, instead of blocking on
// raft.db's own lock and failing with a timeout that says nothing about
// why.
func Lock(dir string) (io.Closer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	l, err := vfs.Default.Lock(path)
	if errors.Is(err, vfs.ErrLocked) {
		holder := "another process"
		if pid := readPid(path); pid > 0 {
			holder = "pid " + strconv.Itoa(pid)
		}
		return nil, fmt.Errorf("data directory %s is in use by %s (a narad node holds its %s): stop that node first, "+
			"or give this one its own data directory (--data-dir, NARAD_DATA_DIR)", dir, holder, LockFile)
	}
	if err != nil {
		return nil, fmt.Errorf("locking the data directory (%s): %w", LockFile, err)
	}
	if err := writePid(path); err != nil {
		l.Close()
		return nil, fmt.Errorf("recording this process in the data directory's %s: %w", LockFile, err)
	}
	return l, nil
}

// writePid replaces the file's content with this process's pid. The lock
// is held on the file, not on a descriptor's content, so a second
// descriptor may write it.
func writePid(path string) error {
	f, err := vfs.Default.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%d\n", os.Getpid())
	return errors.Join(err, f.Close())
}

// readPid is the pid the lock file names; 0 when it names none (the
// holder has not written it yet).
func readPid(path string) int {
	b, err := vfs.ReadFile(vfs.Default, path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}
