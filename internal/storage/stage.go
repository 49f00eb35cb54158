package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/narad-io/narad/internal/vfs"
)

// Stage is a copy of a partition directory being assembled in a directory
// of its own, on the file system of the partitions so that installing it
// is one rename. Nothing reads it as a log until Verify has reopened it;
// nothing serves it until Install has put it in place.
type Stage struct {
	fs  vfs.FS
	dir string
}

// NewStage starts an empty stage at dir, removing whatever an earlier,
// abandoned copy left there.
func NewStage(fsys vfs.FS, dir string) (*Stage, error) {
	s := &Stage{fs: vfs.Or(fsys), dir: dir}
	if err := s.fs.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := s.fs.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return s, nil
}

// Dir is the stage's directory.
func (s *Stage) Dir() string { return s.dir }

// Path is where the stage keeps the file name.
func (s *Stage) Path(name string) string { return filepath.Join(s.dir, name) }

// Size is how many bytes of name the stage holds (0 when it has none).
func (s *Stage) Size(name string) int64 {
	fi, err := s.fs.Stat(s.Path(name))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// Write opens name for writing at the offsets a copy fetches; truncate
// empties it first (a file fetched again from its start). The caller
// syncs and closes it.
func (s *Stage) Write(name string, truncate bool) (vfs.File, error) {
	if !IsFileName(name) {
		return nil, fmt.Errorf("%q is not a file name", name)
	}
	flag := os.O_CREATE | os.O_WRONLY
	if truncate {
		flag |= os.O_TRUNC
	}
	return s.fs.OpenFile(s.Path(name), flag, 0o644)
}

// Keep removes every staged file that keep does not name: what the source
// no longer has (retention ran) must not come back with the copy.
func (s *Stage) Keep(keep map[string]bool) error {
	ents, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if !keep[e.Name()] {
			if err := s.fs.Remove(s.Path(e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Verify opens the staged copy as a partition log with opts — recovery
// included, never skipping a corrupt range, no hooks (a staged copy's
// troubles fail the copy; they are not this node's data) — reads every
// record of every segment (opening checks only the active one), and
// reports the high watermark it recovers to. Any unreadable frame fails it.
func (s *Stage) Verify(opts Options) (uint64, error) {
	opts.SkipCorrupt = false
	opts.Hooks = Hooks{}
	opts.FS = s.fs
	l, err := Open(s.dir, opts)
	if err != nil {
		return 0, err
	}
	hwm, err := verifyAll(l)
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	return hwm, err
}

// verifyAll reads every record below the high watermark, failing at the
// first gap or unreadable range.
func verifyAll(l *Log) (uint64, error) {
	hwm := l.HWM()
	for from := l.Oldest(); from < hwm; {
		res, err := l.Read(from, 4096, 64<<20, NoDueLimit)
		if err != nil {
			return 0, fmt.Errorf("verify the copy at offset %d: %w", from, err)
		}
		if res.Skipped > 0 {
			return 0, fmt.Errorf("verify the copy: %d unreadable records from offset %d", res.Skipped, res.SkippedFrom)
		}
		if len(res.Records) == 0 {
			return 0, fmt.Errorf("verify the copy: no record at offset %d below the high watermark %d", from, hwm)
		}
		from = res.Records[len(res.Records)-1].Offset + 1
	}
	return hwm, nil
}

// Install puts the staged copy in place of the partition directory dir:
// the stage's entries made durable first, whatever dir held (a stale copy
// from an earlier ownership) removed, then one rename and its parent
// fsynced. The caller closed any log open on dir. The stage is gone
// afterwards.
func (s *Stage) Install(dir string) error {
	if err := s.fs.SyncDir(s.dir); err != nil {
		return err
	}
	if err := s.fs.RemoveAll(dir); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	if err := vfs.MkdirAllDurable(s.fs, parent, 0o755); err != nil {
		return err
	}
	if err := s.fs.Rename(s.dir, dir); err != nil {
		return err
	}
	return s.fs.SyncDir(parent)
}

// Remove deletes the stage (nothing is left after an Install).
func (s *Stage) Remove() error { return s.fs.RemoveAll(s.dir) }
