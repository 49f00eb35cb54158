package schedule

import (
	"encoding/binary"
	"hash/crc32"
)

// Entry is one scheduled record: its offset in the partition log and the
// time it falls due, in Unix milliseconds.
type Entry struct {
	Offset uint64
	Due    int64
}

// minute is the bucket an entry's due time falls in.
func (e Entry) minute() int64 { return minuteOf(e.Due) }

func minuteOf(ms int64) int64 {
	if ms < 0 {
		return 0
	}
	return ms / 60_000
}

// An entry on disk, big-endian:
//
//	0  8  offset
//	8  8  due (Unix ms); the top bit set marks a settle of the offset
//	16 4  CRC-32C of bytes 0..15
const (
	entrySize  = 20
	settleFlag = uint64(1) << 63
)

// MaxDue bounds a due time: far beyond the year a record may be
// scheduled ahead, and below the settle flag.
const MaxDue = int64(1) << 50

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// op is one decoded entry of a file.
type op struct {
	Entry
	settle bool
}

func appendOp(b []byte, o op) []byte {
	var e [entrySize]byte
	binary.BigEndian.PutUint64(e[0:], o.Offset)
	d := uint64(o.Due)
	if o.settle {
		d |= settleFlag
	}
	binary.BigEndian.PutUint64(e[8:], d)
	binary.BigEndian.PutUint32(e[16:], crc32.Checksum(e[:16], castagnoli))
	return append(b, e[:]...)
}

// decodeOps decodes whole entries from b. It stops at the first entry
// that does not check and returns how many bytes were good: the caller
// cuts the file there. Past the last checkpoint a bucket file may hold
// anything a crash left (it was written, not fsynced), and all of that is
// in the journal, which is replayed after the cut.
func decodeOps(b []byte, fn func(op)) (good int) {
	for len(b)-good >= entrySize {
		e := b[good : good+entrySize]
		if binary.BigEndian.Uint32(e[16:]) != crc32.Checksum(e[:16], castagnoli) {
			return good
		}
		d := binary.BigEndian.Uint64(e[8:])
		fn(op{Entry: Entry{Offset: binary.BigEndian.Uint64(e), Due: int64(d &^ settleFlag)}, settle: d&settleFlag != 0})
		good += entrySize
	}
	return good
}
