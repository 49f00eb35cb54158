package storage

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/narad-io/narad/internal/vfs"
)

const (
	segmentSuffix = ".log"
	// indexInterval is the spacing, in bytes, of the sparse offset index: a
	// lookup reads at most this many bytes of headers past an index entry,
	// and a 64 MiB segment costs 16 Ki entries.
	indexInterval = 4096
)

func segmentName(base uint64) string { return fmt.Sprintf("%020d%s", base, segmentSuffix) }

// parseSegmentName accepts exactly 20 digits + ".log"; anything else in a
// partition directory (temp files, hwm, cursor files) is not a segment.
func parseSegmentName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	return v, err == nil
}

// listSegments returns the bases of the segment files in dir, ascending.
func listSegments(fsys vfs.FS, dir string) ([]uint64, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var bases []uint64
	for _, e := range ents {
		if b, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			bases = append(bases, b)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases, nil
}

type indexEntry struct {
	offset uint64 // base offset of the frame at pos
	pos    int64
}

// segment is one file of frames. base never changes; size (the end of the
// last valid frame) and end (the offset after its last record) change only
// under the log's write lock, by commits to the active segment.
type segment struct {
	base uint64
	path string
	f    vfs.File

	size int64
	end  uint64

	// mu guards the lazily built facts below, which readers fill in while
	// holding only the log's read lock.
	mu       sync.Mutex
	idx      []indexEntry // sparse: a frame start at least every indexInterval bytes
	idxBuilt bool
	newestAt int64 // commit time of the last record; -1 until known
	oldestAt int64 // commit time of the first record; -1 until known
}

func (s *segment) name() string { return filepath.Base(s.path) }

// addIndex records a frame start if it is far enough from the last entry.
// Called for the active segment by recovery and commits, in order.
func (s *segment) addIndex(offset uint64, pos int64) {
	if n := len(s.idx); n == 0 || pos-s.idx[n-1].pos >= indexInterval {
		s.idx = append(s.idx, indexEntry{offset, pos})
	}
}

// ensureIndex builds the sparse index of a sealed segment by walking its
// frame headers (no payload reads). Sealed segments were fsynced and
// verified at commit; a header that does not parse stops the walk, and
// reads past it take the corrupt-frame path.
func (s *segment) ensureIndex() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idxBuilt {
		return
	}
	s.idx = s.idx[:0]
	// Headers are read indexWalkBytes at a time, not one read each: a
	// sealed 64 MiB segment of small frames is ~200k headers, and a read
	// call apiece took a cold seek into it ~400 ms.
	buf := make([]byte, 0, indexWalkBytes)
	at := int64(0) // the file position of buf[0]
	for pos := int64(0); pos+FrameHeaderSize <= s.size; {
		if pos+FrameHeaderSize > at+int64(len(buf)) {
			n, err := s.f.ReadAt(buf[:min(indexWalkBytes, s.size-pos)], pos)
			if err != nil && n < FrameHeaderSize {
				break
			}
			buf, at = buf[:n], pos
		}
		h, err := parseHeader(buf[pos-at:])
		if err != nil {
			break
		}
		s.addIndex(h.base, pos)
		pos += h.frameLen()
	}
	s.idxBuilt = true
}

// indexWalkBytes is how much of a segment one read of ensureIndex's walk
// takes: small frames' headers come many to a read, and a frame larger
// than it costs one read of this size.
const indexWalkBytes = 64 << 10

// seek returns the position of the frame containing offset o, walking
// headers forward from the nearest index entry. A header that does not
// parse is stepped over by hunting for the next valid frame; the frame found
// is indexed so later seeks start past the damage.
func (s *segment) seek(o uint64) (int64, frameHeader, error) {
	s.ensureIndex()
	s.mu.Lock()
	i := sort.Search(len(s.idx), func(i int) bool { return s.idx[i].offset > o }) - 1
	pos, expected := int64(0), s.base
	if i >= 0 {
		pos, expected = s.idx[i].pos, s.idx[i].offset
	}
	s.mu.Unlock()
	var hdr [FrameHeaderSize]byte
	for pos+FrameHeaderSize <= s.size {
		if _, err := s.f.ReadAt(hdr[:], pos); err != nil {
			return pos, frameHeader{}, err
		}
		h, err := parseHeader(hdr[:])
		if err == nil && h.base != expected {
			err = fmt.Errorf("%w: frame at %d starts at offset %d, expected %d", errBadFrame, pos, h.base, expected)
		}
		if err != nil {
			rpos, rh, found, herr := hunt(s.f, pos+1, s.size, expected+1)
			if herr != nil {
				return pos, h, herr
			}
			if !found || o < rh.base {
				return pos, h, err
			}
			s.insertIndex(rh.base, rpos)
			pos, expected = rpos, rh.base
			continue
		}
		if h.contains(o) {
			return pos, h, nil
		}
		pos, expected = pos+h.frameLen(), h.end()
	}
	return pos, frameHeader{}, fmt.Errorf("%w: offset %d not found before byte %d", errBadFrame, o, s.size)
}

func (s *segment) insertIndex(offset uint64, pos int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.Search(len(s.idx), func(i int) bool { return s.idx[i].offset >= offset })
	if i < len(s.idx) && s.idx[i].offset == offset {
		return
	}
	s.idx = append(s.idx, indexEntry{})
	copy(s.idx[i+1:], s.idx[i:])
	s.idx[i] = indexEntry{offset, pos}
}

// readFrame reads and decodes the frame at pos, verifying its CRC.
func (s *segment) readFrame(pos int64) (frameHeader, []Record, error) {
	var hdr [FrameHeaderSize]byte
	if _, err := s.f.ReadAt(hdr[:], pos); err != nil {
		return frameHeader{}, nil, err
	}
	h, err := parseHeader(hdr[:])
	if err != nil {
		return h, nil, err
	}
	if pos+h.frameLen() > s.size {
		return h, nil, fmt.Errorf("%w: frame runs past the end of the segment", errBadFrame)
	}
	stored := make([]byte, h.storedSize)
	if _, err := s.f.ReadAt(stored, pos+FrameHeaderSize); err != nil {
		return h, nil, err
	}
	recs, err := decodeFrame(h, hdr[:], stored)
	return h, recs, err
}

// newestTime returns the commit time of the segment's newest record,
// found by walking headers to the last frame and decoding it. Commit times
// never decrease, so that is the newest in the segment. A segment sealed
// after a recovery shortfall ends (s.end) past its last frame; then the
// last frame is found by walking its headers.
func (s *segment) newestTime() (int64, error) {
	s.mu.Lock()
	known := s.newestAt
	s.mu.Unlock()
	if known >= 0 {
		return known, nil
	}
	if s.size == 0 {
		return -1, nil
	}
	pos, _, err := s.seek(s.end - 1)
	if err != nil {
		// Only damage sends the walk to the last frame it can reach: a
		// failed read would date the segment by an older frame, and
		// retention would delete records still inside it.
		if !damaged(err) {
			return -1, fmt.Errorf("%s: %w", s.name(), err)
		}
		var ok bool
		var lerr error
		if pos, ok, lerr = s.lastFrame(); lerr != nil {
			return -1, fmt.Errorf("%s: %w", s.name(), lerr)
		} else if !ok {
			return -1, fmt.Errorf("%s: %w", s.name(), err)
		}
	}
	_, recs, err := s.readFrame(pos)
	if err != nil {
		return -1, fmt.Errorf("%s: frame at %d: %w", s.name(), pos, err)
	}
	t := recs[len(recs)-1].CommittedAt
	s.mu.Lock()
	s.newestAt = t
	s.mu.Unlock()
	return t, nil
}

// lastFrame returns the position of the last frame a header walk reaches
// from the last index entry; a read that fails ends it with the error.
func (s *segment) lastFrame() (int64, bool, error) {
	s.ensureIndex()
	s.mu.Lock()
	pos := int64(0)
	if n := len(s.idx); n > 0 {
		pos = s.idx[n-1].pos
	}
	s.mu.Unlock()
	last, found := int64(0), false
	var hdr [FrameHeaderSize]byte
	for pos+FrameHeaderSize <= s.size {
		if _, err := s.f.ReadAt(hdr[:], pos); err != nil {
			if !damaged(err) {
				return 0, false, err
			}
			break
		}
		h, err := parseHeader(hdr[:])
		if err != nil || pos+h.frameLen() > s.size {
			break
		}
		last, found = pos, true
		pos += h.frameLen()
	}
	return last, found, nil
}

// oldestTime returns the commit time of the segment's first record.
func (s *segment) oldestTime() (int64, error) {
	s.mu.Lock()
	known := s.oldestAt
	s.mu.Unlock()
	if known >= 0 || s.size == 0 {
		return known, nil
	}
	_, recs, err := s.readFrame(0)
	if err != nil {
		return -1, fmt.Errorf("%s: frame at 0: %w", s.name(), err)
	}
	s.mu.Lock()
	s.oldestAt = recs[0].CommittedAt
	s.mu.Unlock()
	return recs[0].CommittedAt, nil
}
