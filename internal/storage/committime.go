package storage

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/narad-io/narad/internal/vfs"
)

// CommitTimeAt returns the commit time (unix ms) of the record at offset
// in a closed log's directory, without opening or recovering the log: the
// age of a partition's oldest unconsumed record is wanted for logs nobody
// opened since the node started (a topic nobody consumes), and opening a
// log to say would keep it open and run its recovery for a gauge.
//
// It walks frame headers of the one segment holding offset from its
// start to the frame holding it, then reads that frame. The caller asks
// only below the high watermark Describe gave; a damaged frame there, or
// a segment retention deleted meanwhile, is an error, never a guess.
func CommitTimeAt(fsys vfs.FS, dir string, offset uint64) (int64, error) {
	fsys = vfs.Or(fsys)
	bases, err := listSegments(fsys, dir)
	if err != nil {
		return 0, err
	}
	i := sort.Search(len(bases), func(i int) bool { return bases[i] > offset }) - 1
	if i < 0 {
		return 0, fmt.Errorf("%s: offset %d is below the oldest segment", dir, offset)
	}
	path := filepath.Join(dir, segmentName(bases[i]))
	s, err := peekSegment(fsys, path, bases[i])
	if err != nil {
		return 0, err
	}
	defer s.f.Close()
	pos, _, err := s.seek(offset)
	if err != nil {
		return 0, fmt.Errorf("%s: offset %d: %w", path, offset, err)
	}
	h, recs, err := s.readFrame(pos)
	if err == nil && (!h.contains(offset) || int(offset-h.base) >= len(recs)) {
		err = fmt.Errorf("%w: frame at %d holds %d..%d, not %d", errBadFrame, pos, h.base, h.end(), offset)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: frame at %d: %w", path, pos, err)
	}
	return recs[offset-h.base].CommittedAt, nil
}
