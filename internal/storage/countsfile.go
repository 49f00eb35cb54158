package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/narad-io/narad/internal/vfs"
)

// DeliveryCountsFile is the name of the delivery counts file in a partition
// directory: the delivery_count of the unsettled records delivered at least
// once, written by the broker beside consumer.offset (and copied with it by
// a move), so that counts survive a restart or a move.
//
//	0  4  magic "NDCT"
//	4  1  version 1
//	5  …  uvarint n, the number of entries (at most MaxDeliveryCounts)
//	      n × (uvarint offset delta, uvarint count): offsets strictly
//	      increasing, the first delta from 0, each later one at least 1;
//	      counts 1 .. MaxDeliveryCount
//	-4 4  CRC-32C over every byte before it
//
// The file is replaced whole through vfs.WriteFileAtomic, so a reader sees
// an old file or a new one; a torn or foreign one fails its CRC or its
// shape, and the caller starts from no counts (they are advisory: losing
// them makes records look delivered fewer times, never loses a record).
const DeliveryCountsFile = "delivery.counts"

const (
	countsMagic   = "NDCT"
	countsVersion = 1
	// MaxDeliveryCounts bounds the entries of one file (and so its size:
	// at most about 1 MiB, varints being at most 20 bytes an entry, and
	// typically 3–6 bytes). The writer keeps the highest counts past it.
	MaxDeliveryCounts = 50_000
	// MaxDeliveryCount bounds one count: far above any dead-letter policy's
	// max_deliveries (1000), small enough for an int anywhere.
	MaxDeliveryCount = 1 << 31
)

// CountEntry is one record's delivery count.
type CountEntry struct {
	Offset uint64
	Count  uint64
}

// ErrBadCounts marks a counts file that cannot be decoded (torn, damaged
// or foreign).
var ErrBadCounts = errors.New("bad delivery counts file")

// EncodeDeliveryCounts encodes es, which must be sorted by offset, without
// duplicates, with counts in 1..MaxDeliveryCount and at most
// MaxDeliveryCounts of them; it refuses anything else, so that every file
// written decodes.
func EncodeDeliveryCounts(es []CountEntry) ([]byte, error) {
	if len(es) > MaxDeliveryCounts {
		return nil, fmt.Errorf("%d delivery counts is over the cap of %d", len(es), MaxDeliveryCounts)
	}
	b := make([]byte, 0, 5+binary.MaxVarintLen64+len(es)*6+4)
	b = append(b, countsMagic...)
	b = append(b, countsVersion)
	b = binary.AppendUvarint(b, uint64(len(es)))
	var prev uint64
	for i, e := range es {
		if i > 0 && e.Offset <= prev {
			return nil, fmt.Errorf("delivery counts out of order at %d: offset %d after %d", i, e.Offset, prev)
		}
		if e.Count < 1 || e.Count > MaxDeliveryCount {
			return nil, fmt.Errorf("delivery count %d of offset %d is out of range", e.Count, e.Offset)
		}
		b = binary.AppendUvarint(b, e.Offset-prev)
		b = binary.AppendUvarint(b, e.Count)
		prev = e.Offset
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// DecodeDeliveryCounts decodes a file written by EncodeDeliveryCounts. Any
// other input is refused with an error wrapping ErrBadCounts.
func DecodeDeliveryCounts(b []byte) ([]CountEntry, error) {
	bad := func(why string) ([]CountEntry, error) { return nil, fmt.Errorf("%w: %s", ErrBadCounts, why) }
	if len(b) < 5+1+4 || string(b[:4]) != countsMagic {
		return bad("unknown format")
	}
	if b[4] != countsVersion {
		return bad(fmt.Sprintf("version %d", b[4]))
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return bad("crc mismatch")
	}
	p := body[5:]
	next := func() (uint64, bool) {
		v, k := binary.Uvarint(p)
		if k <= 0 || k != len(binary.AppendUvarint(nil, v)) {
			return 0, false // truncated, overflowing, or not minimal (one file, one encoding)
		}
		p = p[k:]
		return v, true
	}
	n, ok := next()
	if !ok || n > MaxDeliveryCounts {
		return bad("bad entry count")
	}
	out := make([]CountEntry, 0, n)
	var off uint64
	for i := uint64(0); i < n; i++ {
		d, ok1 := next()
		c, ok2 := next()
		if !ok1 || !ok2 {
			return bad("truncated entries")
		}
		if i > 0 && d == 0 || off+d < off {
			return bad("offsets not increasing")
		}
		if c < 1 || c > MaxDeliveryCount {
			return bad("count out of range")
		}
		off += d
		out = append(out, CountEntry{Offset: off, Count: c})
	}
	if len(p) != 0 {
		return bad("trailing bytes")
	}
	return out, nil
}

// WriteDeliveryCountsFS durably replaces path with es (see
// EncodeDeliveryCounts): a fresh temp file, fsynced, renamed over path,
// the directory fsynced. A crash leaves the old file or the new one.
func WriteDeliveryCountsFS(fsys vfs.FS, path string, es []CountEntry) error {
	b, err := EncodeDeliveryCounts(es)
	if err != nil {
		return err
	}
	return vfs.WriteFileAtomic(fsys, path, b)
}

// ReadDeliveryCountsFS reads a counts file. ok is false when it does not
// exist; a damaged one is an error wrapping ErrBadCounts.
func ReadDeliveryCountsFS(fsys vfs.FS, path string) (es []CountEntry, ok bool, err error) {
	b, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	es, err = DecodeDeliveryCounts(b)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return es, true, nil
}
