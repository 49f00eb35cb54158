package storage

import (
	"fmt"
)

// A follower's copy of a held log can travel as the leader's frames, byte
// for byte (docs/replication.md, step 5): the leader reads them as they
// are stored (ReadFrames) and the follower writes them as they came
// (AppendFrames), where records would be decoded by the leader, encoded
// and decoded for the wire, and encoded into new frames by the follower.
// The copy is then what a move's copy of the segment files is: the same
// frames, their WAL sources included. Records (ReadTo, Append) remain
// the way for whatever frames cannot serve: a fetch from inside a frame,
// a damaged frame, a follower of an older release.

// ReadFrames returns the log's frames as stored, from the frame that
// begins at from, up to Written() and to the end of from's segment: as
// many whole frames as fit maxBytes. Each frame's header and CRC are
// checked. It returns nothing (nil, nil) when from is at or past
// Written(), when no frame begins at from (a fetch from inside a frame),
// when the first frame is larger than maxBytes, or lazy, damaged or
// unreadable: the caller then reads records (ReadTo), which cuts a large
// frame into answers of maxBytes (a frame may hold up to MaxFrameBytes,
// more than a node RPC message) and reports damage as every reader
// does. Like ReadTo, a from below the oldest record is a
// *BelowOldestError.
func (l *Log) ReadFrames(from uint64, maxBytes int) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	if from < l.oldest {
		return nil, &BelowOldestError{From: from, Oldest: l.oldest}
	}
	if from >= l.end {
		return nil, nil
	}
	s := l.segmentFor(from)
	// A follower fetches from where its last answer ended, which this
	// remembers (the position cache readers share), so most fetches read
	// once and walk no headers from the sparse index.
	pos, ok := l.cache.position(s.base, from)
	if !ok {
		var h frameHeader
		var err error
		if pos, h, err = s.seek(from); err != nil || h.base != from {
			return nil, nil
		}
	}
	buf, err := readFirstFrames(s, pos, maxBytes)
	if err != nil {
		return nil, nil
	}
	next, at := from, 0
	for at+FrameHeaderSize <= len(buf) {
		h, err := parseHeader(buf[at:])
		if err != nil || h.base != next || h.lazy || h.end() > l.end {
			break
		}
		end := at + int(h.frameLen())
		if end > len(buf) {
			break
		}
		if frameCRC(buf[at:at+FrameHeaderSize], buf[at+FrameHeaderSize:end]) != h.crc {
			break
		}
		next, at = h.end(), end
	}
	if at == 0 {
		return nil, nil
	}
	l.cache.putPosition(s.base, next, pos+int64(at))
	return buf[:at:at], nil
}

// readFirstFrames reads s from pos: maxBytes, never past the segment's
// size.
func readFirstFrames(s *segment, pos int64, maxBytes int) ([]byte, error) {
	n := min(int64(maxBytes), s.size-pos)
	if n < FrameHeaderSize {
		return nil, errBadFrame
	}
	buf := make([]byte, n)
	if _, err := s.f.ReadAt(buf, pos); err != nil {
		return nil, err
	}
	return buf, nil
}

// AppendFrames is Append for frames as a leader's ReadFrames returned
// them: every frame is parsed, its CRC checked and its records decoded
// before anything is written, and they must continue the log as Append's
// records must (the first frame beginning at End(), each next one where
// the last ended, commit times never decreasing and none below the log's
// newest; ErrAppendMismatch otherwise). A lazy frame is refused: this
// copy acknowledges what it writes as durable, and recovery may cut a
// lazy tail. The frames are written as they are, so their WAL sources
// join the log's applied seqs as recovery would find them. It returns
// how many records were appended; on any refusal nothing is written.
func (l *Log) AppendFrames(frames []byte) (int, error) {
	n := 0
	err := l.appendHeld(func(end uint64) (heldBatch, error) {
		b, err := l.parseFrames(frames, end)
		n = b.n
		return b, err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// parseFrames checks frames for AppendFrames against a log ending at end
// whose newest commit time is l.floor, and returns them as a batch.
func (l *Log) parseFrames(frames []byte, end uint64) (heldBatch, error) {
	if len(frames) == 0 {
		return heldBatch{}, ErrEmptyBatch
	}
	b := heldBatch{frames: frames, last: l.floor}
	next := end
	for at := 0; at < len(frames); {
		h, err := parseHeader(frames[at:])
		if err != nil {
			return heldBatch{}, fmt.Errorf("append: frame at byte %d: %w", at, err)
		}
		stop := at + int(h.frameLen())
		if h.frameLen() > int64(len(frames)-at) {
			return heldBatch{}, fmt.Errorf("append: %w: the frame at byte %d runs past the %d bytes sent", errBadFrame, at, len(frames))
		}
		if h.lazy {
			return heldBatch{}, fmt.Errorf("append: %w: the frame at byte %d is lazy (not durable where it was written)", ErrAppendMismatch, at)
		}
		stored := frames[at+FrameHeaderSize : stop]
		recs, err := decodeFrame(h, frames[at:at+FrameHeaderSize], stored)
		if err != nil {
			return heldBatch{}, fmt.Errorf("append: frame at byte %d: %w", at, err)
		}
		if err := continues(recs, next, b.last); err != nil {
			return heldBatch{}, err
		}
		if h.source {
			if b.sources == nil {
				b.sources = map[uint64]uint64{}
			}
			o, q := frameSource(stored)
			b.sources[o] = max(b.sources[o], q)
		}
		b.bases, b.at = append(b.bases, h.base), append(b.at, int64(at))
		b.reqs = append(b.reqs, &commitReq{base: h.base, recs: recs})
		b.stamps = append(b.stamps, recs[0].CommittedAt)
		b.last, b.n, next = recs[len(recs)-1].CommittedAt, b.n+len(recs), h.end()
		at = stop
	}
	return b, nil
}

// FrameRecords is how many records frames (as ReadFrames returns them)
// say they hold, counted from their headers up to the first that does not
// parse: a figure for logs and counters, not a check (AppendFrames
// checks).
func FrameRecords(frames []byte) int {
	n := 0
	for at := 0; at+FrameHeaderSize <= len(frames); {
		h, err := parseHeader(frames[at:])
		if err != nil {
			break
		}
		n += int(h.count)
		at += int(h.frameLen())
	}
	return n
}
