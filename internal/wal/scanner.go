package wal

import (
	"errors"
	"fmt"
	"io"
)

// readChunk is how much a scanner reads ahead in one pread. Large enough that
// sequential reads of small records cost few syscalls, small enough to be a
// negligible resident cost per open reader.
const readChunk = 256 << 10

// scanner decodes frames from a segment file through a reusable read-ahead
// window. Its one memory rule: it never allocates more than the bytes that
// actually exist before limit (plus one chunk), whatever a length field says.
// A frame whose claimed length runs past limit is reported as errShortFrame
// before any buffer for it is sized.
type scanner struct {
	r      io.ReaderAt
	winOff int64  // file offset of win[0]
	win    []byte // bytes [winOff, winOff+len(win)) of the file

	// largestAlloc is the biggest buffer this scanner ever allocated; the
	// fuzz test holds it to the memory rule above.
	largestAlloc int
}

func (s *scanner) reset(r io.ReaderAt) {
	s.r = r
	s.winOff = 0
	s.win = s.win[:0]
}

// bytes returns file bytes [off, off+n). The caller guarantees off+n <= limit
// and that the file holds at least limit bytes. The result aliases the
// window and is valid until the next call.
func (s *scanner) bytes(off int64, n int, limit int64) ([]byte, error) {
	if off >= s.winOff && off+int64(n) <= s.winOff+int64(len(s.win)) {
		p := off - s.winOff
		return s.win[p : p+int64(n)], nil
	}
	want := max(n, readChunk)
	if avail := limit - off; int64(want) > avail {
		want = int(avail) // >= n by the caller's guarantee
	}
	buf := s.win[:0]
	// Drop an oversized buffer left by one huge record rather than pinning it.
	if cap(buf) < want || (cap(buf) > 4*readChunk && want <= readChunk) {
		buf = make([]byte, want)
		s.largestAlloc = max(s.largestAlloc, want)
	}
	buf = buf[:want]
	if _, err := s.r.ReadAt(buf, off); err != nil {
		s.win = buf[:0]
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read %d bytes at byte %d: %w", want, off, err)
	}
	s.win, s.winOff = buf, off
	return buf[:n], nil
}

// frame decodes the frame starting at off, reading nothing at or past limit.
// It returns io.EOF when off == limit, errShortFrame when the frame is cut
// by limit, and a decode error for bytes that are not a record. The view
// aliases the window.
func (s *scanner) frame(off, limit int64) (frameView, int, error) {
	if off >= limit {
		return frameView{}, 0, io.EOF
	}
	if limit-off < frameHeaderSize {
		return frameView{}, 0, errShortFrame
	}
	hdr, err := s.bytes(off, frameHeaderSize, limit)
	if err != nil {
		return frameView{}, 0, err
	}
	size, err := frameBodyLen(hdr)
	if err != nil {
		return frameView{}, 0, err
	}
	if limit-off < int64(size) {
		return frameView{}, 0, errShortFrame
	}
	b, err := s.bytes(off, size, limit)
	if err != nil {
		return frameView{}, 0, err
	}
	return decodeFrame(b)
}

// validFrameAfter reports the offset of the first frame at or after from
// (and before limit) that decodes cleanly and whose seq is plausible as a
// successor of lastGood. Recovery uses it to tell a torn tail (nothing valid
// follows the damage) from corruption in the middle of acknowledged data.
//
// Testing every byte offset with a full CRC would be quadratic on garbage,
// so candidates are first filtered on fields that garbage rarely gets right:
// the length fits, the version byte matches and the seq lies in the only
// range a later record of this segment could have.
//
// A read that fails is an error, never "nothing follows": that answer
// would have recovery truncate acknowledged records the disk simply did
// not return this time.
func (s *scanner) validFrameAfter(from, limit int64, lastGood uint64) (int64, bool, error) {
	const peek = frameHeaderSize + 9 // length, crc, version, seq
	maxSeq := lastGood + uint64((limit-from)/minFrameSizeV1) + 1
	for q := from; limit-q >= minFrameSizeV1; q++ {
		b, err := s.bytes(q, peek, limit)
		if err != nil {
			return 0, false, err
		}
		size, err := frameBodyLen(b)
		if err != nil || int64(size) > limit-q {
			continue
		}
		if v, seq := peekSeq(b); (v != recordVersion && v != recordVersionV1 && v != recordVersionV3) || seq <= lastGood || seq > maxSeq {
			continue
		}
		_, _, err = s.frame(q, limit)
		if err == nil {
			return q, true, nil
		}
		if !isFrameErr(err) {
			return 0, false, err
		}
	}
	return 0, false, nil
}
