package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Frame header, all integers big-endian:
//
//	0  2  magic 0xCA 0xFE
//	2  1  flags: bits 0-2 codec (0 none, 1 zstd); bit 3 source (below);
//	         bit 4 lazy (written without an fdatasync of its own);
//	         bit 5 ids (below)
//	3  4  record count
//	7  8  base offset (offset of the first record)
//	15 4  uncompressed payload size
//	19 4  stored payload size
//	23 4  CRC-32C over header bytes 2..22 and the stored payload
//
// The CRC leaves the magic out so that recovery can hunt for the magic when
// it resynchronises after a bad frame.
//
// With the source flag (bit 3) the stored payload begins with 16 bytes,
// never compressed and covered by the CRC like the rest: the origin (the
// identity of the ingress WAL the frame's records came from, 8 bytes) and
// the highest WAL seq among them (8 bytes). rawSize counts the records'
// bytes only, storedSize includes the 16. Frames written before the flag
// existed have neither bit set and read as before (testdata/v1log).
//
// With the ids flag (bit 5) every record's own WAL seq follows, after the
// source block when there is one, also never compressed and covered by the
// CRC: the origin (8 bytes, only when the frame has no source block: the
// source's origin otherwise), the length n of what follows (4 bytes), and
// n bytes holding one uvarint per record: the first record's seq, then each
// next one's distance from its predecessor minus one (0 for seqs that
// follow each other). A record's message id is derived from its origin
// and seq (package messageid), so it is the same wherever the frame is
// read back: after a restart, on a moved copy (moves copy the segment
// files byte for byte), on a follower (Append keeps them). Records of a
// dispatcher's bucket are usually a few seqs apart:
// about one byte per record, plus 4 (12 without a source) per frame.
// Frames without the flag (written before it existed, or holding records
// that came from no WAL) read with Origin and Seq zero. A binary that
// predates the flag refuses such a frame as bad (unknown flags).
const (
	flagSource = 0x08
	flagLazy   = 0x10
	flagIDs    = 0x20
	flagsKnown = 0x07 | flagSource | flagLazy | flagIDs
	sourceLen  = 16
)
const (
	FrameHeaderSize = 27
	// MaxFrameBytes bounds both the stored and the uncompressed payload of a
	// frame, on write and on read: a corrupt header must never make a reader
	// or recovery allocate without bound.
	MaxFrameBytes = 256 << 20

	magic0 = 0xCA
	magic1 = 0xFE
)

// Codec is a frame's payload compression.
type Codec uint8

const (
	CodecNone Codec = 0
	CodecZstd Codec = 1
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	// ErrFrameTooLarge refuses a commit whose frame would pass MaxFrameBytes.
	ErrFrameTooLarge = errors.New("frame larger than 256 MiB")
	errBadFrame      = errors.New("bad frame")
)

type frameHeader struct {
	codec      Codec
	source     bool // the payload starts with origin and WAL seq
	lazy       bool // written without an fdatasync of its own
	ids        bool // every record's WAL seq follows the source (if any)
	count      uint32
	base       uint64
	rawSize    uint32
	storedSize uint32
	crc        uint32
}

func (h *frameHeader) end() uint64            { return h.base + uint64(h.count) }
func (h *frameHeader) frameLen() int64        { return FrameHeaderSize + int64(h.storedSize) }
func (h *frameHeader) contains(o uint64) bool { return o >= h.base && o < h.end() }

// sourceLen is how many bytes of the stored payload the source takes.
func (h *frameHeader) sourceLen() uint32 {
	if h.source {
		return sourceLen
	}
	return 0
}

// idsMin is the fewest bytes the ids block of a frame of h's count takes:
// the origin unless the source block names it, the length, a byte per
// record. 0 without the ids flag.
func (h *frameHeader) idsMin() uint64 {
	if !h.ids {
		return 0
	}
	n := 4 + uint64(h.count)
	if !h.source {
		n += 8
	}
	return n
}

// Source says where a commit's records came from, for Log.CommitFrom.
// The zero value is a plain commit (Commit).
type Source struct {
	// Origin is the identity of the ingress WAL the records were read
	// from (wal.WAL.Identity); 0: none, the records are not skipped and
	// the frame carries no source.
	Origin uint64
	// Seqs are the records' WAL seqs, ascending, one per record. Records
	// at or below the highest seq the log already holds from Origin are
	// skipped: they are committed already (an idempotent re-dispatch).
	Seqs []uint64
	// Lazy commits without an fdatasync: the records are durable in
	// Origin's WAL, which the caller keeps until Flush (doc.go).
	Lazy bool
}

// frameSource reads the origin and WAL seq at the start of a source
// frame's stored payload.
func frameSource(stored []byte) (origin, seq uint64) {
	return binary.BigEndian.Uint64(stored), binary.BigEndian.Uint64(stored[8:])
}

func putHeader(b []byte, h *frameHeader) {
	b[0], b[1] = magic0, magic1
	b[2] = byte(h.codec)
	if h.source {
		b[2] |= flagSource
	}
	if h.lazy {
		b[2] |= flagLazy
	}
	if h.ids {
		b[2] |= flagIDs
	}
	binary.BigEndian.PutUint32(b[3:], h.count)
	binary.BigEndian.PutUint64(b[7:], h.base)
	binary.BigEndian.PutUint32(b[15:], h.rawSize)
	binary.BigEndian.PutUint32(b[19:], h.storedSize)
	binary.BigEndian.PutUint32(b[23:], h.crc)
}

// parseHeader decodes and sanity-checks a header without looking at the
// payload. Every bound is checked here so that callers may allocate
// storedSize bytes after a successful parse.
func parseHeader(b []byte) (frameHeader, error) {
	if len(b) < FrameHeaderSize {
		return frameHeader{}, fmt.Errorf("%w: short header", errBadFrame)
	}
	if b[0] != magic0 || b[1] != magic1 {
		return frameHeader{}, fmt.Errorf("%w: no magic", errBadFrame)
	}
	h := frameHeader{
		codec:      Codec(b[2] & 0x07),
		source:     b[2]&flagSource != 0,
		lazy:       b[2]&flagLazy != 0,
		ids:        b[2]&flagIDs != 0,
		count:      binary.BigEndian.Uint32(b[3:]),
		base:       binary.BigEndian.Uint64(b[7:]),
		rawSize:    binary.BigEndian.Uint32(b[15:]),
		storedSize: binary.BigEndian.Uint32(b[19:]),
		crc:        binary.BigEndian.Uint32(b[23:]),
	}
	switch {
	case b[2]&^flagsKnown != 0:
		return h, fmt.Errorf("%w: unknown flags 0x%02x", errBadFrame, b[2])
	case h.codec != CodecNone && h.codec != CodecZstd:
		return h, fmt.Errorf("%w: unknown codec %d", errBadFrame, h.codec)
	case h.storedSize > MaxFrameBytes || h.rawSize > MaxFrameBytes:
		return h, fmt.Errorf("%w: payload size over 256 MiB", errBadFrame)
	case h.count == 0:
		return h, fmt.Errorf("%w: zero records", errBadFrame)
	case uint64(h.count)*(4+minRecordBytes) > uint64(h.rawSize):
		return h, fmt.Errorf("%w: %d records cannot fit %d bytes", errBadFrame, h.count, h.rawSize)
	case uint64(h.storedSize) < uint64(h.sourceLen())+h.idsMin():
		return h, fmt.Errorf("%w: frame shorter than its source and ids", errBadFrame)
	case h.codec == CodecNone && !h.ids && uint64(h.rawSize)+uint64(h.sourceLen()) != uint64(h.storedSize):
		return h, fmt.Errorf("%w: uncompressed frame with differing sizes", errBadFrame)
	case h.codec == CodecNone && h.ids && uint64(h.rawSize)+uint64(h.sourceLen())+h.idsMin() > uint64(h.storedSize):
		return h, fmt.Errorf("%w: uncompressed frame shorter than its records and ids", errBadFrame)
	case h.base+uint64(h.count) < h.base:
		return h, fmt.Errorf("%w: offsets overflow", errBadFrame)
	}
	return h, nil
}

// frameCRC covers header bytes 2..22 and the stored payload.
func frameCRC(hdr, stored []byte) uint32 {
	c := crc32.Update(0, castagnoli, hdr[2:23])
	return crc32.Update(c, castagnoli, stored)
}

// frameEncoder builds frames for one log. It is used under the log's
// produce lock, so its buffers are reused without further locking.
type frameEncoder struct {
	codec Codec
	limit int // MaxFrameBytes; lowered by tests to exercise the bound cheaply
	zenc  *zstd.Encoder
	raw   []byte
	out   []byte
}

// encode builds one frame holding recs at offsets base.., each stamped with
// committedAt; origin != 0 writes the source (origin, seq) into it, lazy
// marks it written without an fdatasync of its own. The returned slice is
// valid until the next call.
func (e *frameEncoder) encode(base uint64, recs []Record, committedAt int64, origin, seq uint64, lazy bool) ([]byte, error) {
	raw := e.raw[:0]
	for i := range recs {
		raw = binary.BigEndian.AppendUint32(raw, uint32(recs[i].encodedLen()))
		raw = appendRecord(raw, &recs[i], committedAt)
		if len(raw) > e.limit {
			return nil, ErrFrameTooLarge
		}
	}
	e.raw = raw
	ids, err := recordIDs(recs)
	if err != nil {
		return nil, err
	}
	return e.seal(base, recs, raw, origin, seq, ids, lazy)
}

// recordIDs reports whether recs carry WAL ids (Record.Origin, Seq) for
// the frame to keep: all of them from one origin, seqs ascending, or none.
func recordIDs(recs []Record) (bool, error) {
	o := recs[0].Origin
	for i := range recs {
		switch {
		case recs[i].Origin != o:
			return false, fmt.Errorf("commit: record %d comes from WAL %016x, record 0 from %016x: a frame holds records of one origin", i, recs[i].Origin, o)
		case o != 0 && recs[i].Seq == 0:
			return false, fmt.Errorf("commit: record %d of WAL %016x has no seq", i, o)
		case o != 0 && i > 0 && recs[i].Seq <= recs[i-1].Seq:
			return false, fmt.Errorf("commit: WAL seqs not ascending at record %d (%d after %d)", i, recs[i].Seq, recs[i-1].Seq)
		}
	}
	return o != 0, nil
}

// encodeKept builds one frame of records that were committed before
// (replication's Append, a truncation's rewritten head): each keeps its
// own CommittedAt, and its WAL source when all of them have one that a
// frame can hold (recordIDs; Append cuts its batch into such runs: a
// follower's copy names its records by the leader's message ids). No
// source, not lazy.
func (e *frameEncoder) encodeKept(base uint64, recs []Record) ([]byte, error) {
	raw := e.raw[:0]
	for i := range recs {
		raw = binary.BigEndian.AppendUint32(raw, uint32(recs[i].encodedLen()))
		raw = appendRecord(raw, &recs[i], recs[i].CommittedAt)
		if len(raw) > e.limit {
			return nil, ErrFrameTooLarge
		}
	}
	e.raw = raw
	ids, err := recordIDs(recs)
	return e.seal(base, recs, raw, 0, 0, ids && err == nil, false)
}

// seal compresses raw (the records recs from base) into a frame with its
// header and CRC; ids writes the records' WAL seqs (recordIDs).
func (e *frameEncoder) seal(base uint64, recs []Record, raw []byte, origin, seq uint64, ids, lazy bool) ([]byte, error) {
	count := len(recs)
	out := append(e.out[:0], make([]byte, FrameHeaderSize)...)
	if origin != 0 {
		out = binary.BigEndian.AppendUint64(out, origin)
		out = binary.BigEndian.AppendUint64(out, seq)
	}
	if ids {
		out = appendIDs(out, recs, origin == 0)
	}
	if e.codec == CodecZstd {
		out = e.zenc.EncodeAll(raw, out)
	} else {
		out = append(out, raw...)
	}
	if len(out)-FrameHeaderSize > e.limit {
		return nil, ErrFrameTooLarge
	}
	h := frameHeader{
		codec:      e.codec,
		source:     origin != 0,
		lazy:       lazy,
		ids:        ids,
		count:      uint32(count),
		base:       base,
		rawSize:    uint32(len(raw)),
		storedSize: uint32(len(out) - FrameHeaderSize),
	}
	putHeader(out, &h)
	h.crc = frameCRC(out[:FrameHeaderSize], out[FrameHeaderSize:])
	binary.BigEndian.PutUint32(out[23:], h.crc)
	e.out = out
	return out, nil
}

var (
	zdecOnce sync.Once
	zdec     *zstd.Decoder
)

// decoder is shared: DecodeAll is safe for concurrent use, and its memory
// cap is the frame bound, so a lying header cannot inflate a reader.
func decoder() *zstd.Decoder {
	zdecOnce.Do(func() {
		var err error
		zdec, err = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(MaxFrameBytes),
			zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			panic(err) // only bad options fail here
		}
	})
	return zdec
}

// decodeFrame verifies a frame's CRC and decodes its records. Offsets are
// assigned from the header's base. Records alias the returned buffer.
func decodeFrame(h frameHeader, hdr, stored []byte) ([]Record, error) {
	if got := frameCRC(hdr, stored); got != h.crc {
		return nil, fmt.Errorf("%w: crc mismatch (stored %08x, computed %08x)", errBadFrame, h.crc, got)
	}
	var ids []byte
	var origin uint64
	if h.source {
		origin, _ = frameSource(stored)
	}
	stored = stored[h.sourceLen():]
	if h.ids {
		var err error
		if origin, ids, stored, err = splitIDs(h, origin, stored); err != nil {
			return nil, err
		}
	}
	if h.codec == CodecNone && len(stored) != int(h.rawSize) {
		return nil, fmt.Errorf("%w: uncompressed frame with differing sizes", errBadFrame)
	}
	raw := stored
	if h.codec == CodecZstd {
		var err error
		raw, err = decoder().DecodeAll(stored, make([]byte, 0, h.rawSize))
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %v", errBadFrame, err)
		}
	}
	if len(raw) != int(h.rawSize) {
		return nil, fmt.Errorf("%w: payload is %d bytes, header says %d", errBadFrame, len(raw), h.rawSize)
	}
	recs, err := decodePayload(h, raw)
	if err != nil || !h.ids {
		return recs, err
	}
	return recs, setIDs(recs, origin, ids)
}

// decodePayload splits a frame payload into count length-prefixed records
// that must use up exactly all of it.
func decodePayload(h frameHeader, raw []byte) ([]Record, error) {
	recs := make([]Record, h.count)
	rest := raw
	for i := range recs {
		if len(rest) < 4 {
			return nil, fmt.Errorf("%w: record %d: truncated length", errBadFrame, i)
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: record %d: length %d overruns the frame", errBadFrame, i, n)
		}
		r, err := decodeRecord(rest[:n])
		if err != nil {
			return nil, fmt.Errorf("%w: record %d: %v", errBadFrame, i, err)
		}
		r.Offset = h.base + uint64(i)
		recs[i] = r
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes after %d records", errBadFrame, len(rest), h.count)
	}
	return recs, nil
}

// newEncoder returns the encoder for a codec and level name.
func newEncoder(codec Codec, level string) (*frameEncoder, error) {
	e := &frameEncoder{codec: codec, limit: MaxFrameBytes}
	if codec == CodecZstd {
		lvl := zstd.SpeedFastest
		switch level {
		case "", "fastest":
		case "default":
			lvl = zstd.SpeedDefault
		case "better":
			lvl = zstd.SpeedBetterCompression
		case "best":
			lvl = zstd.SpeedBestCompression
		default:
			return nil, fmt.Errorf("unknown compression level %q (want fastest, default, better or best)", level)
		}
		var err error
		e.zenc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
	} else if codec != CodecNone {
		return nil, fmt.Errorf("unknown codec %d", codec)
	}
	return e, nil
}

// ParseCodec maps a configuration name to a Codec.
func ParseCodec(name string) (Codec, error) {
	switch name {
	case "", "none":
		return CodecNone, nil
	case "zstd":
		return CodecZstd, nil
	}
	return 0, fmt.Errorf("unknown codec %q (want none or zstd)", name)
}
