package wal

import (
	"errors"
	"fmt"
	"io"

	"github.com/narad-io/narad/internal/vfs"
)

// ErrNotRetained is returned by Read for a seq whose segment was already
// deleted (it is below the oldest retained seq).
var ErrNotRetained = errors.New("wal: seq no longer retained")

var errBadSeq = errors.New("seq out of order")

// cursor remembers where the previous Read stopped so the dispatcher, which
// reads the tail in order, continues with a pread instead of a search. It has
// its own read-only descriptor: the syncer's file is the syncer's alone.
type cursor struct {
	seg  *segment
	f    vfs.File
	sc   scanner
	off  int64  // byte offset of the record with seq next
	next uint64 // seq expected at off
}

// drop forgets the cursor and closes its file.
func (c *cursor) drop() error {
	var err error
	if c.f != nil {
		err = c.f.Close()
	}
	*c = cursor{sc: scanner{win: c.sc.win[:0]}}
	return err
}

func (c *cursor) open(fsys vfs.FS, seg *segment, off int64, next uint64) error {
	if c.seg != seg {
		f, err := vfs.Open(fsys, seg.path)
		if err != nil {
			c.drop()
			return fmt.Errorf("wal: open segment %s for reading: %w", seg.path, err)
		}
		c.drop()
		c.seg, c.f = seg, f
		c.sc.reset(f)
	}
	c.off, c.next = off, next
	return nil
}

// frame decodes the record at the cursor and checks it carries the expected
// seq; the cursor does not move.
func (c *cursor) frame(limit int64) (frameView, int, error) {
	v, n, err := c.sc.frame(c.off, limit)
	if err == nil && v.seq != c.next {
		err = fmt.Errorf("%w: record has seq %d, expected %d", errBadSeq, v.seq, c.next)
	}
	return v, n, err
}

// Read returns up to maxRecords records with Seq >= from, in seq order, stopping
// early once the records returned would exceed maxBytes of encoded size (at
// least one record is always returned if any exists, so one large record
// cannot wedge the dispatcher; maxBytes <= 0 means no byte limit). Only
// durable records are returned. The records own their memory and may be
// retained.
//
// It returns an empty result when from > LastSeq(), and ErrNotRetained when
// from is below the oldest retained seq. Reads are cheapest when each starts
// where the previous one ended.
func (w *WAL) Read(from uint64, maxRecords, maxBytes int) ([]Record, error) {
	if maxRecords <= 0 {
		return nil, fmt.Errorf("wal: read from seq %d: maxRecords must be positive, got %d", from, maxRecords)
	}
	w.readMu.Lock()
	defer w.readMu.Unlock()

	w.mu.Lock()
	closed, oldest := w.closed, w.segs[0].first
	w.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if from < oldest {
		return nil, fmt.Errorf("%w: read from seq %d, oldest retained is %d", ErrNotRetained, from, oldest)
	}
	if from > w.lastSeq.Load() {
		return nil, nil
	}
	if err := w.position(from); err != nil {
		return nil, err
	}

	var (
		out   []Record
		a     arena
		bytes int
		topic string
	)
	c := &w.rd
	// A durable end only grows, so decoding up to a stale limit is correct;
	// it is refreshed (taking mu, which appenders contend for) only when
	// reached, not per record.
	limit, _ := w.segmentEnd(c.seg)
	for len(out) < maxRecords {
		if c.off >= limit {
			var next *segment
			if limit, next = w.segmentEnd(c.seg); c.off < limit {
				continue // the active segment grew meanwhile
			}
			if next == nil {
				break // reached the durable end of the log
			}
			if err := c.open(w.fs, next, 0, next.first); err != nil {
				return nil, err
			}
			limit, _ = w.segmentEnd(c.seg)
			continue
		}
		v, n, err := c.frame(limit)
		if err != nil {
			return nil, w.readErr(err)
		}
		if maxBytes > 0 && len(out) > 0 && bytes+n > maxBytes {
			break
		}
		if out == nil {
			out = make([]Record, 0, min(maxRecords, 256))
		}
		r := v.record(&a, topic)
		topic = r.Topic
		out = append(out, r)
		bytes += n
		c.off += int64(n)
		c.next++
	}
	return out, nil
}

// segmentEnd returns seg's durable end and, if seg is sealed, its
// successor. Both come from one critical section: a sealed segment's end is
// final, so moving on can never skip a record.
func (w *WAL) segmentEnd(seg *segment) (int64, *segment) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, s := range w.segs {
		if s == seg {
			if i+1 < len(w.segs) {
				return s.durable, w.segs[i+1]
			}
			return s.durable, nil
		}
	}
	return seg.durable, nil // unreachable: the cursor is dropped with its segment
}

// position points the cursor at from, which is retained and durable. A read
// continuing the previous one is free; otherwise the sparse index bounds the
// scan to indexEveryBytes.
func (w *WAL) position(from uint64) error {
	c := &w.rd
	if c.seg != nil && c.next == from {
		return nil
	}
	w.mu.Lock()
	var seg *segment
	for _, s := range w.segs {
		if s.first > from {
			break
		}
		seg = s
	}
	seq, off := seg.seek(from)
	limit := seg.durable
	w.mu.Unlock()

	if err := c.open(w.fs, seg, off, seq); err != nil {
		return err
	}
	for c.next < from {
		_, n, err := c.frame(limit)
		if err != nil {
			return w.readErr(err)
		}
		c.off += int64(n)
		c.next++
	}
	return nil
}

// readErr reports a failure at the cursor's position and forgets the cursor,
// so a retry starts from a clean search.
func (w *WAL) readErr(err error) error {
	c := &w.rd
	path, off := c.seg.path, c.off
	c.drop()
	// Within durable bounds a short frame, bad checksum or wrong seq can only
	// be damage; so can a file shorter than what was fdatasynced.
	if isFrameErr(err) || errors.Is(err, errBadSeq) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &CorruptError{Path: path, Offset: off, Reason: err}
	}
	return fmt.Errorf("wal: read segment %s at byte %d: %w", path, off, err)
}
