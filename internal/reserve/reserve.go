package reserve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// FileName is the reserve file in the data directory.
const FileName = "disk-reserve"

// Reserve is the room kept on the data disk. See the package documentation.
type Reserve struct {
	path string
	size int64
	log  *slog.Logger
	// free reports the bytes available to this process on the disk
	// holding dir; tests replace it.
	free func(dir string) (int64, error)

	// OnChange, when set before Run, hears every change of Full (a gauge).
	OnChange func(full bool)

	mu   sync.Mutex
	full bool
	held bool // the file is there at its whole size
}

// New returns the reserve of size bytes for dataDir (0: disabled, never
// Full). Call Check once before serving, then Run.
func New(dataDir string, size int64, log *slog.Logger) *Reserve {
	return &Reserve{path: filepath.Join(dataDir, FileName), size: size, log: log, free: statfsFree}
}

func statfsFree(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// Full reports that the reserve is released: new data is to be refused.
func (r *Reserve) Full() bool {
	if r == nil || r.size == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.full
}

// Run checks every interval until ctx ends.
func (r *Reserve) Run(ctx context.Context, every time.Duration) {
	if r == nil || r.size == 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Check()
		}
	}
}

// Check compares free space with the thresholds and releases or re-creates
// the reserve file. It is cheap (one statfs) when nothing changes, and safe
// to call from any goroutine, for example right after an ENOSPC.
func (r *Reserve) Check() {
	if r == nil || r.size == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.full
	defer func() {
		if r.OnChange != nil && r.full != was {
			r.OnChange(r.full)
		}
	}()
	free, err := r.free(filepath.Dir(r.path))
	if err != nil {
		r.log.Warn("disk reserve: cannot read the data disk's free space", "err", err)
		return
	}
	if !r.held {
		r.held = r.present()
	}
	low, high := r.size/2, 2*r.size
	switch {
	case r.held && free < low:
		if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.log.Error("disk reserve: the data disk is nearly full and the reserve file cannot be deleted; "+
				"delete it by hand so topic deletes can run", "file", r.path, "err", err)
			r.full = true
			return
		}
		r.held, r.full = false, true
		r.log.Error("the data disk is nearly full: released the disk reserve so topic deletes can run; produce and topic create "+
			"answer 503 until free space is back above the threshold (delete topics, shorten retention, or grow the disk)",
			"free_bytes", free, "reserve_bytes", r.size, "resume_above_bytes", high)
	case !r.held && free >= high:
		if err := r.create(); err != nil {
			r.log.Warn("disk reserve: cannot re-create the reserve file; produce stays refused", "file", r.path, "err", err)
			r.full = true
			return
		}
		if r.full {
			r.log.Warn("the data disk has room again: disk reserve re-created, produce and topic create resume",
				"free_bytes", free-r.size)
		}
		r.held, r.full = true, false
	case !r.held:
		// Never created (a disk already short at start) or not yet
		// re-creatable: no room is kept, so no new data is taken.
		if !r.full {
			r.log.Error("the data disk is too full to keep its reserve: produce and topic create answer 503 until space is freed",
				"free_bytes", free, "resume_above_bytes", high)
		}
		r.full = true
	}
}

func (r *Reserve) present() bool {
	st, err := os.Stat(r.path)
	return err == nil && st.Size() >= r.size
}

// create writes the reserve file with its blocks allocated (fallocate: a
// sparse file would reserve nothing), durably.
func (r *Reserve) create() error {
	tmp := r.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, r.size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, r.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create %s: %w", r.path, err)
	}
	return nil
}
