package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/narad-io/narad/internal/vfs"
)

// Segment files are named by the seq of their first record, zero-padded to
// 20 digits (the width of MaxUint64) so lexical order is seq order.
const (
	segmentSuffix   = ".wal"
	segmentNameLen  = 20
	indexEveryBytes = 64 << 10 // sparse index granularity, see segment.index
)

func segmentName(first uint64) string {
	return fmt.Sprintf("%020d%s", first, segmentSuffix)
}

func parseSegmentName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(digits) != segmentNameLen {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// listSegments returns the first seqs of the segment files in dir, ascending.
// Files that are not segments are ignored, except leftovers of an interrupted
// checkpoint write, which the caller removes.
func listSegments(fsys vfs.FS, dir string) ([]uint64, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: list %s: %w", dir, err)
	}
	var firsts []uint64
	for _, e := range entries {
		if first, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			firsts = append(firsts, first)
		}
	}
	slices.Sort(firsts)
	return firsts, nil
}

// segment is the bookkeeping for one retained segment file. All mutable
// fields are guarded by WAL.mu: the syncer grows them, the reader and
// SetCheckpoint look at them.
type segment struct {
	first uint64
	path  string

	durable int64  // bytes written and fdatasynced; the reader never reads past it
	last    uint64 // seq of the last durable record; first-1 while empty

	// index holds (seq, offset) of record boundaries at least
	// indexEveryBytes apart so a Read that does not continue the previous one
	// scans at most that much instead of the whole segment.
	index []indexEntry
}

type indexEntry struct {
	seq uint64
	off int64
}

func newSegment(dir string, first uint64) *segment {
	return &segment{first: first, path: filepath.Join(dir, segmentName(first)), last: first - 1}
}

// noteBoundary records that a record with seq starts at off, if far enough
// from the previous index entry.
func (s *segment) noteBoundary(seq uint64, off int64) {
	if n := len(s.index); n == 0 || off-s.index[n-1].off >= indexEveryBytes {
		s.index = append(s.index, indexEntry{seq: seq, off: off})
	}
}

// seek returns the indexed boundary closest below or at seq (or the start of
// the segment).
func (s *segment) seek(seq uint64) (uint64, int64) {
	i, found := slices.BinarySearchFunc(s.index, seq, func(e indexEntry, t uint64) int {
		switch {
		case e.seq < t:
			return -1
		case e.seq > t:
			return 1
		}
		return 0
	})
	if !found {
		i--
	}
	if i < 0 {
		return s.first, 0
	}
	return s.index[i].seq, s.index[i].off
}

// createSegment creates the file for a new segment and makes its directory
// entry durable, so records acknowledged in it cannot vanish with the name.
func createSegment(fsys vfs.FS, dir string, first uint64) (vfs.File, *segment, error) {
	seg := newSegment(dir, first)
	f, err := fsys.OpenFile(seg.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("wal: create segment %s: %w", seg.path, err)
	}
	if err := syncDir(fsys, dir); err != nil {
		// Leaving an empty file named first behind would be read as a
		// segment on the next open; remove it so the directory stays as it
		// was. Whether the create or the remove is durable is unknown after
		// a failed directory sync, so the caller fences (errDirSync).
		return nil, nil, fmt.Errorf("%w: %w", errDirSync, errors.Join(err, f.Close(), fsys.Remove(seg.path)))
	}
	return f, seg, nil
}

// errDirSync marks a failed fsync of the WAL directory: which entries are
// durable is then unknown.
var errDirSync = errors.New("wal: directory sync failed")

// syncDir fsyncs a directory so that creates, renames and removes in it are
// durable.
func syncDir(fsys vfs.FS, dir string) error {
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("wal: sync directory %s: %w", dir, err)
	}
	return nil
}
