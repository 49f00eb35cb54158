package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// ErrCorrupt is wrapped by Open when a bad frame in the active segment is
// followed by valid frames: truncating there would destroy acknowledged
// records and move offsets backwards, so the log refuses to open.
var ErrCorrupt = errors.New("corrupt frame followed by valid frames")

// CorruptError is Open's refusal of mid-segment damage. It names the file
// and byte positions (for the operator's log) and the offsets (for clients,
// who must never see server paths).
type CorruptError struct {
	Path         string // the segment file
	Pos          int64  // byte position of the bad frame
	From         uint64 // first offset the damaged range holds
	ResumePos    int64  // byte position of the next valid frame
	ResumeOffset uint64 // its first offset: the range is [From, ResumeOffset)
	Reason       error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("open %s: frame at %d: %v: %v (next valid frame at byte %d, offset %d)",
		e.Path, e.Pos, e.Reason, ErrCorrupt, e.ResumePos, e.ResumeOffset)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// recoverActive scans the active segment frame by frame, verifying CRCs,
// rebuilds its sparse index and finds where the valid frames end.
//
//   - A torn tail — an incomplete or failing last frame — is truncated: those
//     bytes were never acknowledged (the HWM moves only after verify). But a
//     bad last frame at an offset below published (the hwm file's claim)
//     held acknowledged records: that is damage, and its bytes are kept;
//     the caller reports the loss and continues past it.
//   - A bad frame with valid frames after it is corruption in the middle:
//     a *CorruptError naming the file and byte position, unless skipCorrupt,
//     in which case the bad range is kept on disk and readers skip it.
//     Except past published when every valid frame after it is lazy: that
//     is a lost lazy tail (a power cut wrote back some of its pages and not
//     others). No fdatasync ever covered those frames, the WAL that holds
//     their records was not released past them, so they are cut like a
//     torn tail and re-dispatched. (A synchronous frame after the bad one
//     would prove the bad one was fsynced: that stays corruption.)
//
// Every valid frame's source (origin, WAL seq) is recorded in applied.
func recoverActive(s *segment, skipCorrupt bool, published uint64, log *slog.Logger, applied map[uint64]uint64) (newest int64, err error) {
	fi, err := s.f.Stat()
	if err != nil {
		return -1, err
	}
	fileSize := fi.Size()
	br := bufio.NewReaderSize(io.NewSectionReader(s.f, 0, fileSize), 1<<20)
	var (
		hdr    [FrameHeaderSize]byte
		stored []byte
		pos    int64
		next         = s.base
		lastAt int64 = -1
		have   bool
	)
	s.idx = s.idx[:0]
	for pos < fileSize {
		h, recs, ferr := scanFrame(br, hdr[:], &stored, pos, fileSize)
		if ferr == nil && h.base != next {
			ferr = fmt.Errorf("%w: frame starts at offset %d, expected %d", errBadFrame, h.base, next)
		}
		if ferr != nil && !damaged(ferr) {
			// The read failed, not the bytes: nothing here says the frame
			// is torn or bad. Refuse to open rather than cut or skip it.
			return -1, &IOError{Op: "read", Path: s.path, Err: ferr}
		}
		if ferr != nil {
			resume, rh, found, herr := hunt(s.f, pos+1, fileSize, next)
			if herr == nil && found && next >= published {
				var lazy bool
				if lazy, herr = lazyAfter(s.f, pos, fileSize, next); lazy && herr == nil {
					found = false
					log.Warn("partition log recovery: cutting a lost tail of lazily committed frames at a damaged frame; the ingress WAL re-dispatches their records",
						"file", s.path, "byte", pos, "from_offset", next, "err", ferr)
				}
			}
			if herr != nil {
				return -1, &IOError{Op: "read", Path: s.path, Err: herr}
			}
			if !found && next < published {
				log.Error("partition log recovery: the last frame of the active segment is unreadable but holds acknowledged records; its bytes are kept",
					"file", s.path, "byte", pos, "first_offset", next, "err", ferr)
				break
			}
			if !found {
				// Torn tail: nothing valid follows.
				if err := s.f.Truncate(pos); err != nil {
					return -1, fmt.Errorf("truncate torn tail of %s at %d: %w", s.path, pos, err)
				}
				if err := s.f.Datasync(); err != nil {
					return -1, err
				}
				break
			}
			if !skipCorrupt {
				return -1, &CorruptError{Path: s.path, Pos: pos, From: next, ResumePos: resume, ResumeOffset: rh.base, Reason: ferr}
			}
			// Operator opted in: keep the bad bytes, resume at the next
			// valid frame; readers skip [next, rh.base) and count it.
			log.Warn("partition log recovery: skipping a damaged range of the active segment (storage.skip_corrupt is on); readers step over it and count it",
				"file", s.path, "byte", pos, "from_offset", next, "to_offset", rh.base, "err", ferr)
			pos, next = resume, rh.base
			br.Reset(io.NewSectionReader(s.f, pos, fileSize-pos))
			continue
		}
		s.addIndex(h.base, pos)
		if h.source {
			o, q := frameSource(stored)
			applied[o] = max(applied[o], q)
		}
		if !have {
			s.oldestAt = recs[0].CommittedAt
		}
		have = true
		lastAt = recs[len(recs)-1].CommittedAt
		next = h.end()
		pos += h.frameLen()
	}
	s.size, s.end, s.idxBuilt = pos, next, true
	s.newestAt = lastAt
	if !have {
		s.oldestAt, s.newestAt = -1, -1
	}
	return lastAt, nil
}

// lazyAfter reports whether every valid frame after the bad one at pos is
// lazy: walking forward frame by frame, hunting past each bad one.
func lazyAfter(f io.ReaderAt, pos, fileSize int64, next uint64) (bool, error) {
	for {
		resume, h, found, err := hunt(f, pos+1, fileSize, next)
		if err != nil || !found {
			return err == nil, err
		}
		if !h.lazy {
			return false, nil
		}
		pos, next = resume+h.frameLen()-1, h.end()
	}
}

// sealedSources fills applied from the newest sealed segment that holds
// source frames, walking back from the one before the active segment
// (headers and the 16 source bytes only). An active segment fresh from a
// roll holds none, yet the log holds what the WAL must not re-dispatch.
func (l *Log) sealedSources(applied map[uint64]uint64) error {
	for i := len(l.segs) - 2; i >= 0 && len(applied) == 0; i-- {
		if err := segmentSources(l.segs[i], applied); err != nil {
			return err
		}
	}
	return nil
}

// segmentSources adds the sources of s's frames to applied, walking their
// headers up to s.size (or the first header that does not parse) and
// stopping at s.end: frames past it are shadowed (truncate.go). A read
// that fails is an error: sources missed would have the WAL dispatch
// records the log holds again, at new offsets.
func segmentSources(s *segment, applied map[uint64]uint64) error {
	var hdr [FrameHeaderSize + sourceLen]byte
	for pos := int64(0); pos+FrameHeaderSize <= s.size; {
		if _, err := s.f.ReadAt(hdr[:FrameHeaderSize], pos); err != nil {
			if !damaged(err) {
				return &IOError{Op: "read", Path: s.path, Err: err}
			}
			break
		}
		h, err := parseHeader(hdr[:FrameHeaderSize])
		if err != nil || h.base >= s.end {
			break
		}
		if h.source {
			if _, err := s.f.ReadAt(hdr[FrameHeaderSize:], pos+FrameHeaderSize); err != nil {
				if !damaged(err) {
					return &IOError{Op: "read", Path: s.path, Err: err}
				}
				break
			}
			o, q := frameSource(hdr[FrameHeaderSize:])
			applied[o] = max(applied[o], q)
		}
		pos += h.frameLen()
	}
	return nil
}

// scanFrame reads the next frame from br, verifying it fully.
func scanFrame(br *bufio.Reader, hdr []byte, stored *[]byte, pos, fileSize int64) (frameHeader, []Record, error) {
	if fileSize-pos < FrameHeaderSize {
		return frameHeader{}, nil, fmt.Errorf("%w: %d bytes left, short of a header", errBadFrame, fileSize-pos)
	}
	if _, err := io.ReadFull(br, hdr); err != nil {
		return frameHeader{}, nil, err
	}
	h, err := parseHeader(hdr)
	if err != nil {
		return h, nil, err
	}
	if pos+h.frameLen() > fileSize {
		return h, nil, fmt.Errorf("%w: frame of %d bytes runs past the end of the file", errBadFrame, h.frameLen())
	}
	if cap(*stored) < int(h.storedSize) {
		*stored = make([]byte, h.storedSize)
	}
	buf := (*stored)[:h.storedSize]
	if _, err := io.ReadFull(br, buf); err != nil {
		return h, nil, err
	}
	// decodeFrame checks the CRC first; records are only used for their
	// commit times here, and for zstd frames that needs the decode anyway.
	recs, err := decodeFrame(h, hdr, buf)
	return h, recs, err
}

// hunt looks for the first fully valid frame at or after from whose base
// offset is at least minBase: proof that a bad frame before it sits in the
// middle of the log rather than at its torn end. It reads the rest of the
// file into memory; it runs only when something is already wrong. A read
// that fails is an error, never "nothing found": that answer would let the
// caller cut or skip records the disk simply did not return this time.
func hunt(f io.ReaderAt, from, fileSize int64, minBase uint64) (int64, frameHeader, bool, error) {
	if from >= fileSize {
		return 0, frameHeader{}, false, nil
	}
	rest := make([]byte, fileSize-from)
	if _, err := f.ReadAt(rest, from); err != nil && !errors.Is(err, io.EOF) {
		return 0, frameHeader{}, false, err
	}
	magic := []byte{magic0, magic1}
	for i := 0; i < len(rest); {
		j := bytes.Index(rest[i:], magic)
		if j < 0 {
			break
		}
		i += j
		if h, err := parseHeader(rest[i:]); err == nil && h.base >= minBase &&
			int64(i)+h.frameLen() <= int64(len(rest)) &&
			frameCRC(rest[i:i+FrameHeaderSize], rest[i+FrameHeaderSize:i+int(h.frameLen())]) == h.crc {
			return from + int64(i), h, true, nil
		}
		i++
	}
	return 0, frameHeader{}, false, nil
}
