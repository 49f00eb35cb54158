package wal

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/narad-io/narad/internal/vfs"
)

// ErrCorrupt matches (with errors.Is) every error about damaged WAL data
// that recovery refuses to repair on its own.
var ErrCorrupt = errors.New("wal: corrupt data")

// CorruptError names the file and byte position of damage in a segment.
type CorruptError struct {
	Path   string
	Offset int64
	Reason error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("wal: segment %s corrupt at byte %d: %v", e.Path, e.Offset, e.Reason)
}

func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Reason} }

// isFrameErr tells decode failures (the bytes are not a record) from I/O
// failures (the bytes could not be read), which must never be "repaired".
func isFrameErr(err error) bool {
	for _, target := range []error{errShortFrame, errBadLength, errBadCRC, errBadVersion, errBadFields} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// recovered is the state rebuilt from the segment files at Open.
type recovered struct {
	segs   []*segment
	active vfs.File // the last segment, open for writing at segs[len-1].durable
	size   int64
}

// recoverSegments validates the given segments (ascending first seqs, at
// least one) and rebuilds their bookkeeping.
//
// Every byte of every retained segment is decoded: seqs must run contiguous
// from each file's name and across files. Only the last segment may end in
// damage, and only if no valid record follows the damaged frame: that is a
// torn tail from a write that never completed (so never acknowledged) and it
// is truncated away. Damage anywhere else is corruption of acknowledged data
// and Open refuses with a CorruptError naming the file and byte position;
// silently dropping acknowledged records is the one thing the WAL must not do.
func recoverSegments(fsys vfs.FS, dir string, firsts []uint64) (rec recovered, err error) {
	defer func() {
		if err != nil && rec.active != nil {
			rec.active.Close()
			rec.active = nil
		}
	}()
	var sc scanner
	for i, first := range firsts {
		isLast := i == len(firsts)-1
		seg := newSegment(dir, first)
		if n := len(rec.segs); n > 0 {
			if prev := rec.segs[n-1]; prev.last+1 != first {
				return rec, fmt.Errorf("wal: %w: segment %s starts at seq %d but %s ends at seq %d",
					ErrCorrupt, seg.path, first, prev.path, prev.last)
			}
		}
		flag := os.O_RDONLY
		if isLast {
			flag = os.O_RDWR
		}
		f, err := fsys.OpenFile(seg.path, flag, 0)
		if err != nil {
			return rec, fmt.Errorf("wal: open segment %s: %w", seg.path, err)
		}
		if isLast {
			rec.active = f
		}
		err = scanSegment(&sc, f, seg, isLast)
		if !isLast {
			f.Close()
		}
		if err != nil {
			return rec, err
		}
		rec.segs = append(rec.segs, seg)
		rec.size += seg.durable
	}
	return rec, nil
}

// scanSegment decodes seg's file, filling seg.durable, seg.last and the
// index, and truncates a torn tail when allowed.
func scanSegment(sc *scanner, f vfs.File, seg *segment, tailMayTear bool) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("wal: stat segment %s: %w", seg.path, err)
	}
	return scanTo(sc, f, seg, st.Size(), tailMayTear)
}

// scanTo is scanSegment over the file's first size bytes.
func scanTo(sc *scanner, f vfs.File, seg *segment, size int64, tailMayTear bool) error {
	sc.reset(f)
	off, next := int64(0), seg.first
	for {
		v, n, err := sc.frame(off, size)
		if err == io.EOF {
			break
		}
		if err == nil {
			if v.seq != next {
				return &CorruptError{Path: seg.path, Offset: off, Reason: fmt.Errorf("record has seq %d, expected %d", v.seq, next)}
			}
			seg.noteBoundary(next, off)
			off += int64(n)
			next++
			continue
		}
		if !isFrameErr(err) {
			return fmt.Errorf("wal: segment %s: %w", seg.path, err)
		}
		if !tailMayTear {
			return &CorruptError{Path: seg.path, Offset: off, Reason: err}
		}
		q, ok, herr := sc.validFrameAfter(off+1, size, next-1)
		if herr != nil {
			return fmt.Errorf("wal: segment %s: looking past a bad record at byte %d: %w", seg.path, off, herr)
		}
		if ok {
			return &CorruptError{Path: seg.path, Offset: off,
				Reason: fmt.Errorf("%w; a valid record follows at byte %d", err, q)}
		}
		if err := truncateTail(f, seg.path, off, size); err != nil {
			return err
		}
		break
	}
	seg.durable = off
	seg.last = next - 1
	return nil
}

// truncateTail cuts a torn tail at off and makes the new length durable, so
// the garbage cannot reappear after a later crash and sit between good
// records.
func truncateTail(f vfs.File, path string, off, size int64) error {
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("wal: truncate torn tail of %s from %d to %d bytes: %w", path, size, off, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: sync %s after truncating to %d bytes: %w", path, off, err)
	}
	return nil
}
