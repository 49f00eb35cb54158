package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// An entry, little-endian:
//
//	[0:4]   CRC-32C of everything from byte 4 to the entry's end
//	[4:8]   n, the length of what follows
//	[8]     kind: kindWrite or kindForget
//	[9:11]  path length p
//	[11:11+p] the path, relative to the data directory
//	write only: [11+p:19+p] the file position, then the bytes to its end
//
// A file holds entries back to back. A crash can leave a torn entry at the
// end of the active file only: a group is written whole and fdatasynced
// before any of its writers is answered, and nothing is written after a
// failed one. Reading stops at the first entry that is short or whose CRC
// does not match.
const (
	entryHeader = 8
	kindWrite   = 1
	kindForget  = 2
	maxPath     = math.MaxUint16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entry is one decoded entry; data aliases the buffer it was read from.
type entry struct {
	kind byte
	path string
	pos  int64
	data []byte
}

// appendWrite encodes a write of data at pos of path.
func appendWrite(buf []byte, path string, pos int64, data []byte) []byte {
	return appendEntry(buf, kindWrite, path, pos, data)
}

// appendForget encodes a forget of the directory dir.
func appendForget(buf []byte, dir string) []byte {
	return appendEntry(buf, kindForget, dir, 0, nil)
}

func appendEntry(buf []byte, kind byte, path string, pos int64, data []byte) []byte {
	n := 1 + 2 + len(path) + len(data)
	if kind == kindWrite {
		n += 8
	}
	start := len(buf)
	buf = binary.LittleEndian.AppendUint32(buf, 0)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(n))
	buf = append(buf, kind)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(path)))
	buf = append(buf, path...)
	if kind == kindWrite {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(pos))
		buf = append(buf, data...)
	}
	binary.LittleEndian.PutUint32(buf[start:], crc32.Checksum(buf[start+4:], castagnoli))
	return buf
}

// errTorn ends a file's entries: what follows is short or fails its CRC.
var errTorn = errors.New("torn or damaged entry")

// decode reads the entry at the start of b and its length. errTorn when b
// holds no whole, intact entry; another error when an intact entry says
// something impossible (a damaged journal, not a torn one).
func decode(b []byte) (entry, int, error) {
	if len(b) < entryHeader {
		return entry{}, 0, errTorn
	}
	n := int(binary.LittleEndian.Uint32(b[4:8]))
	if n < 3 || len(b)-entryHeader < n {
		return entry{}, 0, errTorn
	}
	body := b[entryHeader-4 : entryHeader+n]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[0:4]) {
		return entry{}, 0, errTorn
	}
	e := entry{kind: b[8]}
	p := int(binary.LittleEndian.Uint16(b[9:11]))
	rest := b[11 : entryHeader+n]
	if p > len(rest) {
		return entry{}, 0, fmt.Errorf("journal entry: path of %d bytes in an entry of %d", p, n)
	}
	e.path, rest = string(rest[:p]), rest[p:]
	switch e.kind {
	case kindWrite:
		if len(rest) < 8 {
			return entry{}, 0, fmt.Errorf("journal entry: a write of %q without its position", e.path)
		}
		pos := binary.LittleEndian.Uint64(rest)
		if pos > math.MaxInt64 {
			return entry{}, 0, fmt.Errorf("journal entry: a write of %q at position %d", e.path, pos)
		}
		e.pos, e.data = int64(pos), rest[8:]
	case kindForget:
		if len(rest) != 0 {
			return entry{}, 0, fmt.Errorf("journal entry: a forget of %q with %d bytes more", e.path, len(rest))
		}
	default:
		return entry{}, 0, fmt.Errorf("journal entry: unknown kind %d", e.kind)
	}
	return e, entryHeader + n, nil
}
