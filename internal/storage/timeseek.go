package storage

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// OffsetAtTime returns the first offset whose record was committed at or
// after t: Kafka's offsets-for-times, for a consumer that starts "since"
// a time. When t is at or before the oldest retained record's commit
// time it is Oldest (retention deleted what came before); when no record
// readers see (below the HWM) is that new, it is the HWM, the offset the
// next commit gets. An empty log answers its HWM.
//
// Commit times are unix milliseconds; t is rounded up to a whole
// millisecond, so a record stamped in t's millisecond but before t is not
// at or after t.
//
// It is a bisection, never a scan from the start: over the segments by
// the commit time of each one's first record (cached per segment once
// read), then over the segment's sparse offset index by the first record
// of the frame at each entry, then one read of the at most indexInterval
// bytes of frames between two entries. That is O(log segments + log index
// entries) frame reads, plus, the first time a sealed segment is looked
// into, the header walk that builds its index (the one Read's seek pays
// too, and shares).
//
// The bisection is exact because stored commit times never decrease along
// the partition (doc.go). A wall clock stepped back does not break that:
// Commit stamps max(now, newest commit time so far), so a step back stamps
// the floor until the clock catches up — Kafka's max-timestamp-so-far,
// taken when the record is written rather than when it is looked up. A
// directory that held decreasing times all the same (bytes this package
// did not write) still gets an answer where the times cross t — the
// record before it is older than t, the record at it is not — but not
// necessarily the first such offset.
//
// A frame the bisection reads that is damaged is an error naming the file
// (errBadFrame, as CommitTimeAt): the answer is not guessed past it. A read
// that fails is an *IOError.
func (l *Log) OffsetAtTime(t time.Time) (uint64, error) {
	return l.offsetAtMilli(ceilMilli(t))
}

// ceilMilli is t in unix milliseconds, rounded up.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli() // rounds toward the past: the nanoseconds are never negative
	if t.Sub(time.UnixMilli(ms)) > 0 {
		ms++
	}
	return ms
}

// offsetAtMilli is OffsetAtTime for a commit time in unix milliseconds.
// It holds the read lock throughout, as Read does: retention cannot
// delete a segment under it, nor a commit move the active segment's size.
func (l *Log) offsetAtMilli(ms int64) (uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return 0, ErrClosed
	}
	oldest, limit := l.oldest, l.hwm
	if oldest >= limit {
		return limit, nil
	}
	// Segments holding records readers may see: on a held log those past
	// the HWM are not read (the answer is clamped to the HWM either way).
	segs := l.segs[:sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base >= limit })]
	// Bisect for the first segment whose first record is at or after ms:
	// every segment before lo starts before it, every one from hi on not.
	lo, hi := 0, len(segs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		at, err := segs[m].oldestTime()
		if err != nil {
			return 0, seekError(segs[m], err)
		}
		if at < 0 || at >= ms { // at < 0: no record (an empty active segment)
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == 0 {
		return oldest, nil
	}
	next := limit
	if lo < len(segs) {
		next = segs[lo].base
	}
	o, err := offsetInSegment(segs[lo-1], ms, next)
	if err != nil {
		return 0, seekError(segs[lo-1], err)
	}
	return min(o, limit), nil
}

// offsetInSegment returns the first offset of s committed at or after ms,
// or next (where the records after s begin) when none is. The segment's
// first record is known to be older than ms. Called under the log's read
// lock, so s.size is stable.
func offsetInSegment(s *segment, ms int64, next uint64) (uint64, error) {
	s.ensureIndex()
	s.mu.Lock()
	// A copy: insertIndex (a seek past damage) may shift entries in place.
	idx := slices.Clone(s.idx)
	s.mu.Unlock()
	// Entries past the first frame, which is known older than ms already.
	entries := idx[:0]
	for _, e := range idx {
		if e.pos > 0 {
			entries = append(entries, e)
		}
	}
	// Bisect for the first entry whose frame starts at or after ms.
	lo, hi := 0, len(entries)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		at, err := firstTimeAt(s, entries[m])
		if err != nil {
			return 0, err
		}
		if at >= ms {
			hi = m
		} else {
			lo = m + 1
		}
	}
	from, to, after := int64(0), s.size, next
	if lo > 0 {
		from = entries[lo-1].pos
	}
	if lo < len(entries) {
		to, after = entries[lo].pos, entries[lo].offset
	}
	o, found, err := scanFrames(s, from, to, ms)
	if err != nil || found {
		return o, err
	}
	return after, nil
}

// firstTimeAt reads the frame an index entry points at and returns its
// first record's commit time.
func firstTimeAt(s *segment, e indexEntry) (int64, error) {
	h, recs, err := s.readFrame(e.pos)
	if err == nil && h.base != e.offset {
		err = fmt.Errorf("%w: frame at %d starts at offset %d, the index says %d", errBadFrame, e.pos, h.base, e.offset)
	}
	if err != nil {
		return 0, fmt.Errorf("frame at %d: %w", e.pos, err)
	}
	return recs[0].CommittedAt, nil
}

// scanFrames reads the frames in [from, to) of s with one read and returns
// the offset of the first record committed at or after ms, if one is
// there. from and to are frame starts (index entries, 0 or the size), so
// the range holds whole frames.
func scanFrames(s *segment, from, to int64, ms int64) (uint64, bool, error) {
	buf := make([]byte, to-from)
	if _, err := s.f.ReadAt(buf, from); err != nil {
		return 0, false, fmt.Errorf("bytes %d..%d: %w", from, to, err)
	}
	for off := 0; off < len(buf); {
		h, err := parseHeader(buf[off:])
		if err == nil && int64(off)+h.frameLen() > int64(len(buf)) {
			err = fmt.Errorf("%w: frame runs past byte %d", errBadFrame, to)
		}
		if err != nil {
			return 0, false, fmt.Errorf("frame at %d: %w", from+int64(off), err)
		}
		end := off + int(h.frameLen())
		recs, err := decodeFrame(h, buf[off:off+FrameHeaderSize], buf[off+FrameHeaderSize:end])
		if err != nil {
			return 0, false, fmt.Errorf("frame at %d: %w", from+int64(off), err)
		}
		for _, r := range recs {
			if r.CommittedAt >= ms {
				return r.Offset, true, nil
			}
		}
		off = end
	}
	return 0, false, nil
}

// seekError names the segment a time seek could not read: damage as it
// is (errBadFrame underneath), a failed read as an *IOError.
func seekError(s *segment, err error) error {
	if damaged(err) {
		return fmt.Errorf("partition log %s: seek by time: %w", s.path, err)
	}
	return &IOError{Op: "seek by time", Path: s.path, Err: err}
}
