package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
	"time"
)

// NoDueLimit as maxCommittedAt reads regardless of commit time.
const NoDueLimit = math.MaxInt64

// ReadResult is what one Read returns.
type ReadResult struct {
	// Records are committed records in offset order. They may alias shared
	// decoded frames: read-only, copy to keep.
	Records []Record
	// Next is the offset to read from next time.
	Next uint64
	// NotDueAt, when non-zero, is the commit time of the first record that
	// was not returned because it is newer than maxCommittedAt. Commit times
	// never decrease along a partition, so nothing after it is due either:
	// a delay cursor can sleep until NotDueAt + delay.
	NotDueAt int64
	// Skipped counts unreadable records in [SkippedFrom, SkippedFrom+Skipped)
	// that this read stepped over (then Records is empty and Next is past
	// them): damaged frames, or a range recovery found lost. It is a gap,
	// not the end of the log — records may follow; read again from Next.
	// The log counts each such record once (CorruptSkipped).
	SkippedFrom uint64
	Skipped     uint64
}

// BelowOldestError reports a read below the oldest retained offset
// (retention deleted it). Consumers move up to Oldest; fan-out cursors count
// the gap as drop-behind.
type BelowOldestError struct{ From, Oldest uint64 }

func (e *BelowOldestError) Error() string {
	return fmt.Sprintf("offset %d is below the oldest retained offset %d", e.From, e.Oldest)
}

// Read returns committed records from offset from: at most maxRecords, and
// at most maxBytes of keys and payloads (but always at least one record when
// one is readable, so an oversized record cannot wedge a reader), stopping
// at the HWM and at the first record committed after maxCommittedAt.
func (l *Log) Read(from uint64, maxRecords, maxBytes int, maxCommittedAt int64) (ReadResult, error) {
	l.reads.Add(1)
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.readLocked(from, l.hwm, maxRecords, maxBytes, maxCommittedAt)
}

// readLocked is Read up to limit (the HWM for readers, the end for a
// follower's fetch: ReadTo). Called under l.mu.
func (l *Log) readLocked(from, limit uint64, maxRecords, maxBytes int, maxCommittedAt int64) (ReadResult, error) {
	if l.closed {
		return ReadResult{}, ErrClosed
	}
	if from < l.oldest {
		return ReadResult{}, &BelowOldestError{From: from, Oldest: l.oldest}
	}
	res := ReadResult{Next: from}
	bytes := 0
	for res.Next < limit && len(res.Records) < maxRecords {
		s := l.segmentFor(res.Next)
		fr, err := l.frameFor(s, res.Next)
		if err != nil {
			if len(res.Records) > 0 {
				return res, nil // hand out what is good; the next read reports the gap
			}
			if !damaged(err) {
				// An I/O error (EIO, …) says nothing of the bytes: they
				// may read fine next time. Skipping would settle records
				// nobody ever saw; the reader gets the error and retries.
				return res, l.readFailed(s, err)
			}
			// Not past the limit: on a held log the damaged range may run
			// past what Release allowed, and a reader's Next must not.
			to, herr := l.skipRange(s, res.Next, err)
			if herr != nil {
				return res, l.readFailed(s, herr)
			}
			to = min(to, limit)
			res.SkippedFrom, res.Skipped = res.Next, to-res.Next
			res.Next = to
			return res, nil
		}
		// A held log's limit may fall inside a frame (Release moves to any
		// offset): records past it are not handed out.
		for i, n := res.Next-fr.h.base, min(uint64(len(fr.recs)), limit-fr.h.base); i < n; i++ {
			r := fr.recs[i]
			if r.CommittedAt > maxCommittedAt {
				res.NotDueAt = r.CommittedAt
				return res, nil
			}
			sz := len(r.Key) + len(r.Payload)
			if len(res.Records) == maxRecords || (len(res.Records) > 0 && bytes+sz > maxBytes) {
				return res, nil
			}
			res.Records = append(res.Records, r)
			bytes += sz
			res.Next++
		}
	}
	return res, nil
}

// readFailed counts a read's I/O error, logs it at most once per
// readFailLogEvery for the log (consumers retry at their polling rate),
// and returns it as the reader's error.
func (l *Log) readFailed(s *segment, err error) error {
	if h := l.opts.Hooks.ReadFailed; h != nil {
		h()
	}
	now := time.Now().UnixNano()
	if last := l.readFailLogged.Load(); now-last >= int64(readFailLogEvery) && l.readFailLogged.CompareAndSwap(last, now) {
		l.log.Error("partition log read failed; readers retry, nothing is skipped", "file", s.path, "err", err)
	}
	return &IOError{Op: "read", Path: s.path, Err: err}
}

// readFailLogEvery spaces the log lines of failing reads.
const readFailLogEvery = 10 * time.Second

// damaged reports whether a frame could not be read because of its bytes
// (a bad header or checksum, a frame cut short by a truncated file), not
// because the read itself failed.
func damaged(err error) bool {
	return errors.Is(err, errBadFrame) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// segmentFor returns the segment holding offset o (oldest <= o < hwm).
// Called under l.mu.
func (l *Log) segmentFor(o uint64) *segment {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > o }) - 1
	return l.segs[max(i, 0)]
}

// frameFor returns the decoded frame of s containing offset o, from the
// cache when a sequential reader was just there.
func (l *Log) frameFor(s *segment, o uint64) (*cachedFrame, error) {
	pos, ok := l.cache.position(s.base, o)
	if ok {
		if fr, ok := l.cache.frame(s.base, pos); ok && fr.h.contains(o) {
			return fr, nil
		}
	}
	if !ok {
		if fr, ok := l.cache.containing(s.base, o); ok {
			return fr, nil
		}
		var err error
		if pos, _, err = s.seek(o); err != nil {
			return nil, fmt.Errorf("%s: offset %d: %w", s.path, o, err)
		}
	}
	if fr, ok := l.cache.frame(s.base, pos); ok && fr.h.contains(o) {
		return fr, nil
	}
	h, recs, err := s.readFrame(pos)
	if err == nil && !h.contains(o) {
		err = fmt.Errorf("%w: frame at %d holds %d..%d, not %d", errBadFrame, pos, h.base, h.end(), o)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: frame at %d: %w", s.path, pos, err)
	}
	// A cached frame costs its raw bytes (the decoded records' keys and
	// payloads point into them) plus a Record header per record: counting
	// only the bytes let three busy partitions hold ~17 MB under a 4 MiB
	// bound.
	fr := &cachedFrame{h: h, recs: recs, size: int(h.rawSize) + len(recs)*recordHeaderBytes}
	l.cache.put(s.base, pos, fr)
	return fr, nil
}

// skipRange finds where readable records resume after an unreadable frame
// holding o: the next CRC-valid frame in the segment, or the segment's end.
// The range is remembered so every reader skips the same records; it is
// counted and logged once per record, however many readers step over it.
func (l *Log) skipRange(s *segment, o uint64, cause error) (uint64, error) {
	to, ok := l.cache.skip(o)
	if !ok {
		to = s.end
		_, h, found, err := hunt(s.f, 0, s.size, o+1)
		if err != nil {
			return 0, err // the hunt's read failed: where the damage ends is unknown yet
		}
		if found && h.base < s.end {
			to = h.base
		}
		l.cache.putSkip(o, to)
	}
	if n := l.skips.add(o, to); n > 0 {
		l.corrupt.Add(n)
		if h := l.opts.Hooks.CorruptSkipped; h != nil {
			h(n)
		}
		l.log.Error("unreadable records skipped by readers (recorded loss)",
			"file", s.path, "from_offset", o, "to_offset", to, "records", n, "err", cause)
	}
	return to, nil
}

// skipCounter remembers the unreadable ranges readers stepped over, so each
// record is counted once for the life of the Log. Every skip over one
// damaged stretch ends at the same offset (the next valid frame, or the
// segment's end) and starts somewhere inside it, so ranges are kept by
// their end with the lowest start counted so far.
type skipCounter struct {
	mu   sync.Mutex
	from map[uint64]uint64 // end → lowest start counted
}

// add counts [from, to) and returns how many of its records were new.
func (c *skipCounter) add(from, to uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.from == nil {
		c.from = make(map[uint64]uint64)
	}
	low, seen := c.from[to]
	if seen && low <= from {
		return 0
	}
	c.from[to] = from
	if seen {
		return low - from
	}
	return to - from
}
