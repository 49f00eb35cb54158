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
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], origin)
	binary.BigEndian.PutUint64(b[8:], seq)
	return encode('w', b[:])
}

// FromPosition is the id of the record at offset of partition of the
// topic incarnation inc.
func FromPosition(inc uint64, partition int, offset uint64) string {
	var b [20]byte
	binary.BigEndian.PutUint64(b[:], inc)
	binary.BigEndian.PutUint32(b[8:], uint32(partition))
	binary.BigEndian.PutUint64(b[12:], offset)
	return encode('p', b[:])
}

// encode is kind followed by b in base32: one allocation, the string's
// (every message a consume answers gets one).
func encode(kind byte, b []byte) string {
	var out [MaxLen]byte
	out[0] = kind
	n := enc.EncodedLen(len(b))
	enc.Encode(out[1:1+n], b)
	return string(out[:1+n])
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
	if origin != 0 {
		return FromWAL(origin, seq)
	}
	return FromPosition(Incarnation(name, inc), partition, offset)
}
