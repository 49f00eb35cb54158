package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/narad-io/narad/internal/header"
)

// recordVersion is the first byte of every record envelope. A reader that
// meets another value refuses the record rather than guessing its layout.
//
// A record without headers is written as version 0x02, byte for byte what
// binaries before headers wrote (and still read); only a record with
// headers is 0x03, so the feature costs nothing to those who do not use
// it, and a log that never saw a header stays readable by an older binary.
const (
	recordVersion        = 0x02
	recordVersionHeaders = 0x03
)

// minRecordBytes is the smallest encoded record: version, a zero key length
// and the 8-byte commit time. Decoders use it to bound record counts read
// from untrusted headers before allocating anything.
const minRecordBytes = 1 + 1 + 8

// NoOffset is the Offset of a record a commit did not store (a caller's
// mark: Commit sets the Offset of every record it stores, and leaves the
// others as they were).
const NoOffset = ^uint64(0)

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
	// Headers are sorted by name, no name twice (header.Check); nil when
	// the record has none. Their strings never alias a frame buffer.
	Headers []header.Header
	// Origin and Seq say which ingress WAL record this one is (the WAL's
	// identity, wal.WAL.Identity, and the record's seq there), the source
	// of its message id (package messageid); zero when it came from no
	// WAL. A commit keeps them in the frame (frame.go, the ids flag) when
	// every record of the batch has them, from one origin, seqs
	// ascending; CommitFrom sets them from its Source; a held log's Append
	// keeps them as the leader's log had them; Read returns them.
	Origin uint64
	Seq    uint64
}

// encodedLen is the size of r's envelope (without the 4-byte length prefix
// that frames put in front of it).
func (r *Record) encodedLen() int {
	n := 1 + uvarintLen(uint64(len(r.Key))) + len(r.Key) + 8 + len(r.Payload)
	if len(r.Headers) > 0 {
		n += header.EncodedLen(r.Headers)
	}
	return n
}

// appendRecord appends r's envelope, stamped with committedAt:
//
//	[version 0x02][key length uvarint][key][committed_at_ms 8][payload]
//	[version 0x03][key length uvarint][key][committed_at_ms 8][headers][payload]
//
// where headers is header.Append's encoding (a count, then lengths and
// bytes), and 0x03 is written only when the record has headers.
func appendRecord(dst []byte, r *Record, committedAt int64) []byte {
	if len(r.Headers) == 0 {
		dst = append(dst, recordVersion)
	} else {
		dst = append(dst, recordVersionHeaders)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.Key)))
	dst = append(dst, r.Key...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(committedAt))
	if len(r.Headers) > 0 {
		dst = header.Append(dst, r.Headers)
	}
	return append(dst, r.Payload...)
}

var errBadRecord = errors.New("malformed record")

// decodeRecord parses one envelope. The returned Key and Payload alias b;
// Headers are copied (header.Decode bounds every length it reads).
func decodeRecord(b []byte) (Record, error) {
	if len(b) < minRecordBytes {
		return Record{}, fmt.Errorf("%w: %d bytes is below the minimum", errBadRecord, len(b))
	}
	if b[0] != recordVersion && b[0] != recordVersionHeaders {
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
	rest = rest[8:]
	if b[0] == recordVersionHeaders {
		hs, n, err := header.Decode(rest)
		if err != nil {
			return Record{}, fmt.Errorf("%w: %v", errBadRecord, err)
		}
		r.Headers, rest = hs, rest[n:]
	}
	r.Payload = rest[:len(rest):len(rest)]
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
