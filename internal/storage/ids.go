package storage

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The ids block of a frame (frame.go, flag bit 5): each record's WAL seq,
// so that a record's message id (package messageid) is derived from what the
// frame holds and never stored as bytes of its own.

// appendIDs appends the ids block of recs (recordIDs said they carry
// one origin, seqs ascending): the origin when withOrigin (the frame has no
// source block naming it), the length of the seqs, then the seqs as
// uvarints, each after the first as its distance from the previous minus
// one.
func appendIDs(out []byte, recs []Record, withOrigin bool) []byte {
	if withOrigin {
		out = binary.BigEndian.AppendUint64(out, recs[0].Origin)
	}
	at := len(out)
	out = append(out, 0, 0, 0, 0)
	prev := uint64(0)
	for i := range recs {
		v := recs[i].Seq
		if i > 0 {
			v -= prev + 1
		}
		out = binary.AppendUvarint(out, v)
		prev = recs[i].Seq
	}
	binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-4))
	return out
}

// splitIDs takes the ids block off the front of stored (past the source
// block): the origin (origin as given when the source block named it),
// the encoded seqs, and the rest of stored.
func splitIDs(h frameHeader, origin uint64, stored []byte) (uint64, []byte, []byte, error) {
	if !h.source {
		if len(stored) < 8 {
			return 0, nil, nil, fmt.Errorf("%w: ids block cut short", errBadFrame)
		}
		origin, stored = binary.BigEndian.Uint64(stored), stored[8:]
	}
	if origin == 0 {
		return 0, nil, nil, fmt.Errorf("%w: ids of origin 0", errBadFrame)
	}
	if len(stored) < 4 {
		return 0, nil, nil, fmt.Errorf("%w: ids block cut short", errBadFrame)
	}
	n := binary.BigEndian.Uint32(stored)
	stored = stored[4:]
	if uint64(n) > uint64(len(stored)) || uint64(n) < uint64(h.count) {
		return 0, nil, nil, fmt.Errorf("%w: ids block of %d bytes for %d records in %d bytes", errBadFrame, n, h.count, len(stored))
	}
	return origin, stored[:n], stored[n:], nil
}

// setIDs gives recs (a frame's, in order) their origin and the seqs ids
// encodes; every byte of ids must be used, seqs must ascend from 1 without
// overflowing.
func setIDs(recs []Record, origin uint64, ids []byte) error {
	prev := uint64(0)
	for i := range recs {
		v, n := binary.Uvarint(ids)
		if n <= 0 {
			return fmt.Errorf("%w: record %d: bad WAL seq", errBadFrame, i)
		}
		ids = ids[n:]
		seq := v
		if i > 0 {
			if v > math.MaxUint64-prev-1 {
				return fmt.Errorf("%w: record %d: WAL seq overflows", errBadFrame, i)
			}
			seq = prev + 1 + v
		}
		if seq == 0 {
			return fmt.Errorf("%w: record %d: WAL seq 0", errBadFrame, i)
		}
		recs[i].Origin, recs[i].Seq = origin, seq
		prev = seq
	}
	if len(ids) != 0 {
		return fmt.Errorf("%w: %d bytes after the records' WAL seqs", errBadFrame, len(ids))
	}
	return nil
}
