package messageid

import (
	"encoding/base32"
	"encoding/binary"
	"hash/fnv"
)

// MaxLen bounds an id (docs/http-api.md promises at most 40 characters).
const MaxLen = 40

var enc = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// FromWAL is the id of the record with seq in the ingress WAL whose
// identity is origin (both non-zero).
func FromWAL(origin, seq uint64) string {
	var out [MaxLen]byte
	return string(appendWAL(out[:0], origin, seq))
}

// FromPosition is the id of the record at offset of partition of the
// topic incarnation inc.
func FromPosition(inc uint64, partition int, offset uint64) string {
	var out [MaxLen]byte
	return string(appendPosition(out[:0], inc, partition, offset))
}

// Incarnation is what a position id names a topic by: its incarnation,
// or for a topic that has none (0: created before incarnations existed) a
// hash of its name with the top bit set.
func Incarnation(name string, inc uint64) uint64 {
	if inc != 0 {
		return inc
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64() | 1<<63
}

// Of is the id of a record read back from partition of a topic (name,
// incarnation inc): from its WAL source when the log kept one (origin
// non-zero), else from its position.
func Of(name string, inc uint64, partition int, offset, origin, seq uint64) string {
	var out [MaxLen]byte
	return string(AppendOf(out[:0], name, inc, partition, offset, origin, seq))
}

// AppendOf appends Of's id to dst: a caller naming many records (a
// consume answer) makes one string of them all and slices it.
func AppendOf(dst []byte, name string, inc uint64, partition int, offset, origin, seq uint64) []byte {
	if origin != 0 {
		return appendWAL(dst, origin, seq)
	}
	return appendPosition(dst, Incarnation(name, inc), partition, offset)
}

func appendWAL(dst []byte, origin, seq uint64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], origin)
	binary.BigEndian.PutUint64(b[8:], seq)
	return appendKind(dst, 'w', b[:])
}

func appendPosition(dst []byte, inc uint64, partition int, offset uint64) []byte {
	var b [20]byte
	binary.BigEndian.PutUint64(b[:], inc)
	binary.BigEndian.PutUint32(b[8:], uint32(partition))
	binary.BigEndian.PutUint64(b[12:], offset)
	return appendKind(dst, 'p', b[:])
}

// appendKind appends kind followed by b in base32.
func appendKind(dst []byte, kind byte, b []byte) []byte {
	return enc.AppendEncode(append(dst, kind), b)
}
