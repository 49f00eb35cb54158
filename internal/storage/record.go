package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// recordVersion is the first byte of every record envelope. A reader that
// meets another value refuses the record rather than guessing its layout.
const recordVersion = 0x02

// minRecordBytes is the smallest encoded record: version, a zero key length
// and the 8-byte commit time. Decoders use it to bound record counts read
// from untrusted headers before allocating anything.
const minRecordBytes = 1 + 1 + 8

// Record is one message in a partition log.
//
// Records returned by Read may point into decoded frame buffers that the log
// shares between readers: treat Key and Payload as read-only, and copy them
// to keep them beyond the next read.
type Record struct {
	Offset      uint64 // set by Commit and by Read
	Key         []byte // empty means keyless: no key is ever invented
	Payload     []byte
	CommittedAt int64 // unix milliseconds, stamped by Commit
}

// encodedLen is the size of r's envelope (without the 4-byte length prefix
// that frames put in front of it).
func (r *Record) encodedLen() int {
	return 1 + uvarintLen(uint64(len(r.Key))) + len(r.Key) + 8 + len(r.Payload)
}

// appendRecord appends r's envelope, stamped with committedAt:
// [version 0x02][key length uvarint][key][committed_at_ms 8][payload].
func appendRecord(dst []byte, r *Record, committedAt int64) []byte {
	dst = append(dst, recordVersion)
	dst = binary.AppendUvarint(dst, uint64(len(r.Key)))
	dst = append(dst, r.Key...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(committedAt))
	return append(dst, r.Payload...)
}

var errBadRecord = errors.New("malformed record")

// decodeRecord parses one envelope. The returned Key and Payload alias b.
func decodeRecord(b []byte) (Record, error) {
	if len(b) < minRecordBytes {
		return Record{}, fmt.Errorf("%w: %d bytes is below the minimum", errBadRecord, len(b))
	}
	if b[0] != recordVersion {
		return Record{}, fmt.Errorf("%w: version 0x%02x", errBadRecord, b[0])
	}
	klen, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return Record{}, fmt.Errorf("%w: bad key length", errBadRecord)
	}
	rest := b[1+n:]
	if klen > uint64(len(rest)) || uint64(len(rest))-klen < 8 {
		return Record{}, fmt.Errorf("%w: key length %d overruns the record", errBadRecord, klen)
	}
	var r Record
	if klen > 0 {
		r.Key = rest[:klen:klen]
	}
	rest = rest[klen:]
	r.CommittedAt = int64(binary.BigEndian.Uint64(rest[:8]))
	r.Payload = rest[8:len(rest):len(rest)]
	return r, nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
