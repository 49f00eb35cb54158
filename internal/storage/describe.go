package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/narad-io/narad/internal/vfs"
)

// Stats describe a partition log for `partition_stats` and lag figures.
type Stats struct {
	Segments        int
	OldestOffset    uint64
	HighWatermark   uint64 // also the next offset to be assigned
	SizeBytes       int64
	OldestSegmentAt int64 // unix seconds of the oldest retained record; 0 when empty
	// Exact is false when a closed log was described from a directory whose
	// hwm file has no boundary (after a crash, until the log is opened and
	// closed again): HighWatermark may then lag by up to one persist interval.
	Exact bool
}

// Stats describes an open log from memory. It does not touch the log's
// last-access stamp (that lives in the caller's registry), so monitoring
// never keeps an idle log open.
func (l *Log) Stats() Stats {
	l.mu.RLock()
	defer l.mu.RUnlock()
	st := Stats{Segments: len(l.segs), OldestOffset: l.oldest, HighWatermark: l.hwm, Exact: true}
	for _, s := range l.segs {
		st.SizeBytes += s.size
	}
	if l.hwm > l.oldest && !l.closed {
		if t, err := l.segs[0].oldestTime(); err == nil && t > 0 {
			st.OldestSegmentAt = t / 1000
		}
	}
	return st
}

// Describe describes a closed log from its directory alone — segment file
// names and sizes plus the hwm file — without opening or recovering it.
// A directory that does not exist describes an empty, never-used log.
//
// A log always has an active segment: opening one creates it when the
// directory has none. So a directory without segment files (a partition
// never opened yet) describes as the log it opens as, with one empty
// segment, and a partition shows segments ≥ 1 from its creation, as the
// reference's does — without describing ever creating a file.
func Describe(dir string) (Stats, error) { return DescribeFS(vfs.Default, dir) }

// DescribeFS is Describe through fsys.
func DescribeFS(fsys vfs.FS, dir string) (Stats, error) {
	bases, err := listSegments(fsys, dir)
	if errors.Is(err, os.ErrNotExist) {
		return Stats{Segments: 1, Exact: true}, nil
	}
	if err != nil {
		return Stats{}, err
	}
	h, herr := ReadHWMFileFS(fsys, dir)
	if len(bases) == 0 {
		// No segment and no hwm file: a directory made before any write
		// (a fan-out cursor file can come first). Nothing was ever here;
		// the empty active segment is counted, as the log opens with it.
		exact := (herr == nil && h.Boundary) || errors.Is(herr, os.ErrNotExist)
		return Stats{Segments: 1, HighWatermark: h.HWM, OldestOffset: h.HWM, Exact: exact}, nil
	}
	st := Stats{Segments: len(bases), OldestOffset: bases[0]}
	last := bases[len(bases)-1]
	for _, b := range bases {
		fi, err := fsys.Stat(filepath.Join(dir, segmentName(b)))
		if err != nil {
			return Stats{}, err
		}
		size := fi.Size()
		if b == last && herr == nil && h.Boundary && h.Segment == last && h.Position <= size {
			size = h.Position
		}
		st.SizeBytes += size
	}
	switch {
	case herr == nil && h.Boundary && h.Segment == last:
		st.HighWatermark, st.Exact = h.HWM, true
	case herr == nil:
		st.HighWatermark = max(h.HWM, last)
	default:
		st.HighWatermark = last // nothing better without opening the log
	}
	if st.HighWatermark > st.OldestOffset {
		if t, err := firstRecordTime(fsys, filepath.Join(dir, segmentName(bases[0]))); err == nil {
			st.OldestSegmentAt = t / 1000
		}
	}
	return st, nil
}

// peekSegment opens a segment file of a closed log for a few reads,
// without building its index: seek then walks headers from the start only
// as far as the frame it wants, where building one would walk the whole
// file. The caller closes s.f.
func peekSegment(fsys vfs.FS, path string, base uint64) (*segment, error) {
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &segment{base: base, path: path, f: f, size: fi.Size(), idxBuilt: true}, nil
}

// firstRecordTime reads one frame of a segment file for its first record's
// commit time.
func firstRecordTime(fsys vfs.FS, path string) (int64, error) {
	s, err := peekSegment(fsys, path, 0)
	if err != nil {
		return 0, err
	}
	defer s.f.Close()
	_, recs, err := s.readFrame(0)
	if err != nil {
		return 0, fmt.Errorf("%s: frame at 0: %w", path, err)
	}
	return recs[0].CommittedAt, nil
}
