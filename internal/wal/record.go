package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/narad-io/narad/internal/header"
)

// Record is one produced message as the WAL stores it.
type Record struct {
	Seq        uint64 // assigned by Append; strictly increasing, contiguous from 1
	Topic      string
	Key        []byte // nil or empty means keyless; the WAL never invents a key
	Partition  int32  // target partition
	Payload    []byte
	AcceptedAt int64 // unix milliseconds, as given by the caller
	// Incarnation is the topic's incarnation (meta.Topic.Incarnation) when
	// the record was accepted, so a record of a deleted topic is never
	// committed into a re-created topic of the same name. 0 is unknown: a
	// version-1 record, or a topic created before incarnations existed.
	Incarnation uint64
	// Headers are the record's headers, sorted by name (header.Check);
	// nil when none. A record with headers is written as version 3.
	Headers []header.Header
}

// On-disk frame layout of one record. All integers are big-endian.
//
//	offset  size  field
//	0       4     bodyLen   uint32, number of body bytes after this 8-byte header
//	4       4     crc       CRC-32C (Castagnoli) over bytes [0,4) and the body
//	8       1     version   2 or 3; version-1 frames are still read
//	9       8     seq       uint64
//	17      8     accepted  int64, unix ms
//	25      4     partition int32
//	29      2     topicLen  uint16
//	31      4     keyLen    uint32
//	35      8     incarnation uint64 (versions 2 and 3)
//	43      4     headersLen uint32 (version 3 only)
//	43/47   ...   topic, then key, then headers (version 3), then payload
//	              (payloadLen is what remains of the body)
//
// A version-1 frame is the same without the incarnation: its topic starts
// at offset 35 and it decodes with Incarnation 0. A record without headers
// is written as version 2, as before headers existed; one with headers as
// version 3, whose headers are header.Append's encoding (header.Decode
// bounds every length in it). Versions 1 and 2 are read so a WAL written
// by an older binary drains.
//
// The length is covered by the CRC so a flipped length bit that still points
// inside the file cannot make a neighbouring byte range look valid. The
// version byte sits first in the body so a future layout can be told apart,
// and so a recovery scan can reject most garbage offsets before hashing.
const (
	frameHeaderSize = 8
	bodyFixedSize   = 35 // version 2
	bodyFixedSizeV1 = 27
	bodyFixedSizeV3 = 39
	minFrameSize    = frameHeaderSize + bodyFixedSize
	minFrameSizeV1  = frameHeaderSize + bodyFixedSizeV1 // the smallest frame any version has
	recordVersion   = 2
	recordVersionV1 = 1
	recordVersionV3 = 3 // version 2 with headers

	// MaxRecordBytes bounds one encoded record (header included). Payloads are
	// at most 1 MiB by product rule; the bound leaves ample headroom for topic
	// and key while still making a corrupt length unable to trigger an
	// unbounded allocation during recovery or reads.
	MaxRecordBytes = 17 << 20

	// MaxTopicBytes is what the 16-bit topic length field can carry.
	MaxTopicBytes = math.MaxUint16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrRecordTooLarge is returned by Append for a record whose encoding would
// exceed MaxRecordBytes (or whose topic exceeds MaxTopicBytes).
var ErrRecordTooLarge = errors.New("wal: record too large")

// Decoding failures. errShortFrame means the bytes end inside a frame (a
// candidate torn tail); the others mean the bytes present are not a record.
var (
	errShortFrame = errors.New("frame extends past end of data")
	errBadLength  = errors.New("frame length out of bounds")
	errBadCRC     = errors.New("frame checksum mismatch")
	errBadVersion = errors.New("unknown record version")
	errBadFields  = errors.New("record field lengths exceed body")
)

// encodedSize is the frame size of r, or an error if r cannot be stored.
func encodedSize(r *Record) (int, error) {
	if len(r.Topic) > MaxTopicBytes {
		return 0, fmt.Errorf("%w: topic is %d bytes, limit %d", ErrRecordTooLarge, len(r.Topic), MaxTopicBytes)
	}
	// Summing in int64 keeps the check honest on 32-bit platforms.
	n := frameSize(r)
	if n > MaxRecordBytes {
		return 0, fmt.Errorf("%w: encoded size %d bytes, limit %d", ErrRecordTooLarge, n, MaxRecordBytes)
	}
	return int(n), nil
}

// frameSize is the frame size of r, unchecked.
func frameSize(r *Record) int64 {
	n := int64(minFrameSize) + int64(len(r.Topic)) + int64(len(r.Key)) + int64(len(r.Payload))
	if len(r.Headers) > 0 {
		n += bodyFixedSizeV3 - bodyFixedSize + int64(header.EncodedLen(r.Headers))
	}
	return n
}

// appendRecord appends the frame of r (with the given seq) to dst. The caller
// has checked r with encodedSize; size is that result.
func appendRecord(dst []byte, r *Record, seq uint64, size int) []byte {
	start := len(dst)
	dst = grow(dst, size)
	f := dst[start : start+size]
	binary.BigEndian.PutUint32(f[0:4], uint32(size-frameHeaderSize))
	b := f[frameHeaderSize:]
	binary.BigEndian.PutUint64(b[1:9], seq)
	binary.BigEndian.PutUint64(b[9:17], uint64(r.AcceptedAt))
	binary.BigEndian.PutUint32(b[17:21], uint32(r.Partition))
	binary.BigEndian.PutUint16(b[21:23], uint16(len(r.Topic)))
	binary.BigEndian.PutUint32(b[23:27], uint32(len(r.Key)))
	binary.BigEndian.PutUint64(b[27:35], r.Incarnation)
	b[0] = recordVersion
	n := bodyFixedSize
	if len(r.Headers) > 0 {
		b[0], n = recordVersionV3, bodyFixedSizeV3
	}
	n += copy(b[n:], r.Topic)
	n += copy(b[n:], r.Key)
	if len(r.Headers) > 0 {
		hb := header.Append(b[n:n], r.Headers)
		binary.BigEndian.PutUint32(b[35:39], uint32(len(hb)))
		n += len(hb)
	}
	copy(b[n:], r.Payload)
	binary.BigEndian.PutUint32(f[4:8], frameCRC(f))
	return dst
}

// grow extends dst by n bytes, reallocating with doubling so the staging
// buffer reaches a steady size instead of growing per record.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	c := 2*cap(dst) + n
	nd := make([]byte, len(dst)+n, c)
	copy(nd, dst)
	return nd
}

// frameCRC computes the checksum of a whole frame (length and body, skipping
// the crc field itself).
func frameCRC(frame []byte) uint32 {
	c := crc32.Update(0, castagnoli, frame[0:4])
	return crc32.Update(c, castagnoli, frame[frameHeaderSize:])
}

// frameView is a decoded record whose byte fields alias the decoded buffer.
type frameView struct {
	seq         uint64
	acceptedAt  int64
	partition   int32
	incarnation uint64
	topic       []byte
	key         []byte
	headers     []byte // header.Append's encoding; nil when none
	payload     []byte
}

// frameBodyLen validates the length field at the start of b (which must hold
// at least frameHeaderSize bytes) and returns the full frame size. It is
// separate from decodeFrame so readers can bound a buffer before reading the
// body: this is the check that keeps a corrupt length from allocating.
func frameBodyLen(b []byte) (int, error) {
	n := binary.BigEndian.Uint32(b[0:4])
	if n < bodyFixedSizeV1 || uint64(n) > MaxRecordBytes-frameHeaderSize {
		return 0, fmt.Errorf("%w: body length %d", errBadLength, n)
	}
	return frameHeaderSize + int(n), nil
}

// decodeFrame decodes the frame at the start of b. It returns the view and the
// frame size. It never allocates; the view aliases b.
func decodeFrame(b []byte) (frameView, int, error) {
	var v frameView
	if len(b) < frameHeaderSize {
		return v, 0, errShortFrame
	}
	size, err := frameBodyLen(b)
	if err != nil {
		return v, 0, err
	}
	if len(b) < size {
		return v, 0, errShortFrame
	}
	f := b[:size]
	if binary.BigEndian.Uint32(f[4:8]) != frameCRC(f) {
		return v, 0, errBadCRC
	}
	body := f[frameHeaderSize:]
	fixed := bodyFixedSize
	switch body[0] {
	case recordVersion:
		if len(body) < bodyFixedSize {
			return v, 0, fmt.Errorf("%w: version-2 body of %d bytes", errBadFields, len(body))
		}
		v.incarnation = binary.BigEndian.Uint64(body[27:35])
	case recordVersionV3:
		if len(body) < bodyFixedSizeV3 {
			return v, 0, fmt.Errorf("%w: version-3 body of %d bytes", errBadFields, len(body))
		}
		v.incarnation = binary.BigEndian.Uint64(body[27:35])
		fixed = bodyFixedSizeV3
	case recordVersionV1:
		fixed = bodyFixedSizeV1
	default:
		return v, 0, fmt.Errorf("%w: %d", errBadVersion, body[0])
	}
	v.seq = binary.BigEndian.Uint64(body[1:9])
	v.acceptedAt = int64(binary.BigEndian.Uint64(body[9:17]))
	v.partition = int32(binary.BigEndian.Uint32(body[17:21]))
	topicLen := uint64(binary.BigEndian.Uint16(body[21:23]))
	keyLen := uint64(binary.BigEndian.Uint32(body[23:27]))
	headersLen := uint64(0)
	if body[0] == recordVersionV3 {
		headersLen = uint64(binary.BigEndian.Uint32(body[35:39]))
	}
	rest := uint64(len(body) - fixed)
	if topicLen+keyLen+headersLen > rest {
		return v, 0, fmt.Errorf("%w: topic %d + key %d + headers %d > %d", errBadFields, topicLen, keyLen, headersLen, rest)
	}
	p := uint64(fixed)
	v.topic = body[p : p+topicLen]
	p += topicLen
	if keyLen > 0 {
		v.key = body[p : p+keyLen]
	}
	p += keyLen
	if headersLen > 0 {
		hb := body[p : p+headersLen]
		// The block must be exactly one well-formed list: a v3 frame with an
		// empty or malformed list is not a record this package wrote.
		if n, err := header.Scan(hb); err != nil || n != len(hb) {
			return v, 0, fmt.Errorf("%w: headers block of %d bytes: %v", errBadFields, headersLen, err)
		}
		v.headers = hb
	} else if body[0] == recordVersionV3 {
		return v, 0, fmt.Errorf("%w: version-3 record without headers", errBadFields)
	}
	p += headersLen
	v.payload = body[p:]
	return v, size, nil
}

// peekSeq returns the seq of a frame without checking it, for the recovery
// scan's cheap plausibility filter. b must hold frameHeaderSize+9 bytes.
func peekSeq(b []byte) (version byte, seq uint64) {
	return b[frameHeaderSize], binary.BigEndian.Uint64(b[frameHeaderSize+1 : frameHeaderSize+9])
}

// arena hands out copies of record bytes from shared chunks so a Read of many
// small records costs a few allocations instead of two per record. Chunks
// start small and double, so a Read of one record does not allocate a full
// chunk. A retained record keeps its chunk alive; that is bounded by
// arenaChunk and is the price of not allocating per record.
type arena struct {
	buf []byte
}

const (
	arenaFirstChunk = 4 << 10
	arenaChunk      = 64 << 10
)

func (a *arena) copy(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if len(b) > cap(a.buf)-len(a.buf) {
		if len(b) >= arenaChunk/4 {
			// Large values get their own allocation so they don't strand
			// most of a chunk.
			return append([]byte(nil), b...)
		}
		a.buf = make([]byte, 0, max(min(2*cap(a.buf), arenaChunk), arenaFirstChunk, len(b)))
	}
	s := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[s:len(a.buf):len(a.buf)]
}

// record materialises v as a Record that owns its bytes. prevTopic lets a
// run of records on one topic share one string.
func (v *frameView) record(a *arena, prevTopic string) Record {
	topic := prevTopic
	if string(v.topic) != prevTopic { // compiler avoids allocating for this compare
		topic = string(v.topic)
	}
	var hs []header.Header
	if v.headers != nil {
		hs, _, _ = header.Decode(v.headers) // checked by decodeFrame
	}
	return Record{
		Headers:     hs,
		Seq:         v.seq,
		Topic:       topic,
		Key:         a.copy(v.key),
		Partition:   v.partition,
		AcceptedAt:  v.acceptedAt,
		Payload:     a.copy(v.payload),
		Incarnation: v.incarnation,
	}
}
