package schedule

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/narad-io/narad/internal/vfs"
)

// The index's files lie flat in its directory (a partition's, which a
// move copies file by file, whole and in name order, after the consumer
// frontier file): JournalName, then the buckets, BucketPrefix and the
// minute. That order is what makes a copy whole: whatever a copied
// frontier passed was synced before it was written, so it is in the
// journal copied next, or in a bucket copied after the journal (a
// checkpoint that emptied the journal had fsynced the buckets first).
const (
	JournalName  = "sched.journal"
	BucketPrefix = "sched.m"
)

var errClosed = errors.New("schedule: index closed")

// fileSet is the index's files: the journal, kept open, and the bucket
// files, opened to append and closed again (a year of minutes is too many
// to keep open). Its methods run under the Index's syncMu, or before the
// Index is shared (recover).
type fileSet struct {
	fs      vfs.FS
	dir     string
	journal vfs.File
	jsize   int64
	dirty   map[int64]bool // bucket files written since the last checkpoint
	dirMade bool
}

func (f *fileSet) bucketPath(m int64) string {
	return filepath.Join(f.dir, BucketPrefix+strconv.FormatInt(m, 10))
}

// bucketCount is what recover learns of one bucket file.
type bucketCount struct {
	live int
	low  uint64
}

// recover brings the directory to a checkpoint: torn tails cut, the
// journal replayed into the bucket files and emptied, files of settled
// buckets removed. It returns each remaining bucket's count.
func (f *fileSet) recover() (map[int64]bucketCount, error) {
	f.dirty = make(map[int64]bool)
	ents, err := f.fs.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	f.dirMade = true
	minutes := make(map[int64]bool)
	for _, e := range ents {
		name := e.Name()
		if m, ok := strings.CutPrefix(name, BucketPrefix); ok {
			if n, err := strconv.ParseInt(m, 10, 64); err == nil && n >= 0 {
				minutes[n] = true
			}
		}
	}
	for m := range minutes {
		if _, err := f.cut(f.bucketPath(m)); err != nil {
			return nil, err
		}
	}
	// Replay the journal: what a Sync made durable but the bucket files
	// may have lost.
	jops, err := f.cut(filepath.Join(f.dir, JournalName))
	if err != nil {
		return nil, err
	}
	if len(jops) > 0 {
		if err := f.appendBuckets(jops); err != nil {
			return nil, err
		}
		for _, o := range jops {
			minutes[o.minute()] = true
		}
	}
	if err := f.checkpoint(nil); err != nil {
		return nil, err
	}
	counts := make(map[int64]bucketCount)
	var empty []int64
	for m := range minutes {
		set := make(map[uint64]struct{})
		err := f.readBucket(m, func(o op) {
			if o.settle {
				delete(set, o.Offset)
			} else {
				set[o.Offset] = struct{}{}
			}
		})
		if err != nil {
			return nil, err
		}
		if len(set) == 0 {
			empty = append(empty, m)
			continue
		}
		c := bucketCount{live: len(set), low: ^uint64(0)}
		for off := range set {
			c.low = min(c.low, off)
		}
		counts[m] = c
	}
	for _, m := range empty {
		if err := f.fs.Remove(f.bucketPath(m)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("schedule: %w", err)
		}
	}
	return counts, nil
}

// cut reads a file's good entries and truncates it after them: anything
// past them is what a crash left of writes not yet fsynced.
func (f *fileSet) cut(path string) ([]op, error) {
	b, err := vfs.ReadFile(f.fs, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	var ops []op
	good := decodeOps(b, func(o op) { ops = append(ops, o) })
	if good < len(b) {
		h, err := f.fs.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("schedule: %w", err)
		}
		err = h.Truncate(int64(good))
		if err == nil {
			err = h.Sync()
		}
		if cerr := h.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("schedule: cut %s: %w", path, err)
		}
	}
	return ops, nil
}

// readBucket calls fn for each good entry of bucket m's file (none when it
// does not exist).
func (f *fileSet) readBucket(m int64, fn func(op)) error {
	b, err := vfs.ReadFile(f.fs, f.bucketPath(m))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	decodeOps(b, fn)
	return nil
}

// write appends ops to the journal and fdatasyncs it, then appends them
// to their bucket files (no fsync: the checkpoint's).
func (f *fileSet) write(ops []op) error {
	if !f.dirMade {
		if err := vfs.MkdirAllDurable(f.fs, f.dir, 0o755); err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
		f.dirMade = true
	}
	if f.journal == nil {
		j, err := f.fs.OpenFile(filepath.Join(f.dir, JournalName), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
		st, err := j.Stat()
		if err == nil && st.Size() == 0 {
			// Perhaps just created: its entry in the directory must be
			// as durable as what the first Sync writes into it.
			err = f.fs.SyncDir(f.dir)
		}
		if err != nil {
			j.Close()
			return fmt.Errorf("schedule: %w", err)
		}
		f.journal, f.jsize = j, st.Size()
	}
	buf := make([]byte, 0, len(ops)*entrySize)
	for _, o := range ops {
		buf = appendOp(buf, o)
	}
	if _, err := f.journal.WriteAt(buf, f.jsize); err != nil {
		return fmt.Errorf("schedule: journal: %w", err)
	}
	if err := f.journal.Datasync(); err != nil {
		return fmt.Errorf("schedule: journal: %w", err)
	}
	f.jsize += int64(len(buf))
	return f.appendBuckets(ops)
}

// appendBuckets appends ops to their buckets' files, in order.
func (f *fileSet) appendBuckets(ops []op) error {
	by := make(map[int64][]byte)
	var order []int64
	for _, o := range ops {
		m := o.minute()
		if _, ok := by[m]; !ok {
			order = append(order, m)
		}
		by[m] = appendOp(by[m], o)
	}
	for _, m := range order {
		h, err := f.fs.OpenFile(f.bucketPath(m), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
		_, err = h.Write(by[m])
		if cerr := h.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("schedule: bucket %d: %w", m, err)
		}
		f.dirty[m] = true
	}
	return nil
}

// checkpoint fsyncs the bucket files written since the last checkpoint
// and the directory, removes the files of the buckets in done, then
// empties the journal: everything it held is in fsynced bucket files.
func (f *fileSet) checkpoint(done []int64) error {
	for m := range f.dirty {
		h, err := f.fs.OpenFile(f.bucketPath(m), os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			delete(f.dirty, m)
			continue
		}
		if err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
		err = h.Sync()
		if cerr := h.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("schedule: bucket %d: %w", m, err)
		}
		delete(f.dirty, m)
	}
	for _, m := range done {
		if err := f.fs.Remove(f.bucketPath(m)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("schedule: %w", err)
		}
	}
	if !f.dirMade {
		return nil
	}
	if err := f.fs.SyncDir(f.dir); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	if f.journal == nil {
		j, err := f.fs.OpenFile(filepath.Join(f.dir, JournalName), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
		f.journal = j
	}
	if err := f.journal.Truncate(0); err != nil {
		return fmt.Errorf("schedule: journal: %w", err)
	}
	if err := f.journal.Datasync(); err != nil {
		return fmt.Errorf("schedule: journal: %w", err)
	}
	f.jsize = 0
	return nil
}

// removeAll removes the index's files and forgets the open journal.
func (f *fileSet) removeAll() error {
	if f.journal != nil {
		f.journal.Close()
		f.journal = nil
	}
	f.jsize, f.dirty = 0, make(map[int64]bool)
	ents, err := f.fs.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	for _, e := range ents {
		if n := e.Name(); n == JournalName || strings.HasPrefix(n, BucketPrefix) {
			if err := f.fs.Remove(filepath.Join(f.dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("schedule: %w", err)
			}
		}
	}
	if err := f.fs.SyncDir(f.dir); err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	return nil
}

func (f *fileSet) close() error {
	if f.journal == nil {
		return nil
	}
	err := f.journal.Close()
	f.journal = nil
	return err
}
