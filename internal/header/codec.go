package header

import (
	"encoding/binary"
	"fmt"
)

// The encoding of a non-empty list:
//
//	count uvarint, then per header: name length uvarint, name,
//	value length uvarint, value
//
// An empty list is never encoded: its absence is what the formats that
// carry a list (a record envelope, a WAL record) use for "no headers".

// EncodedLen is the size of hs's encoding.
func EncodedLen(hs []Header) int {
	n := uvarintLen(uint64(len(hs)))
	for _, h := range hs {
		n += uvarintLen(uint64(len(h.Name))) + len(h.Name) + uvarintLen(uint64(len(h.Value))) + len(h.Value)
	}
	return n
}

// Append appends hs's encoding to dst.
func Append(dst []byte, hs []Header) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(hs)))
	for _, h := range hs {
		dst = binary.AppendUvarint(dst, uint64(len(h.Name)))
		dst = append(dst, h.Name...)
		dst = binary.AppendUvarint(dst, uint64(len(h.Value)))
		dst = append(dst, h.Value...)
	}
	return dst
}

// Decode parses a list at the start of b and returns it with the number
// of bytes it took. Names and values are substrings of one string copied
// from b: two allocations per list, and nothing aliases b. Every count
// and length is checked against what remains of b and against the stored
// caps before it is used, so hostile bytes cannot make it allocate more
// than len(b) or loop past b. It checks sizes, not syntax: bytes that
// pass a CRC were written by Check's callers.
func Decode(b []byte) ([]Header, int, error) {
	p, err := Scan(b)
	if err != nil {
		return nil, 0, err
	}
	count, n := binary.Uvarint(b)
	s := string(b[n:p]) // the lengths ride along; substrings skip them
	hs := make([]Header, count)
	q := 0
	for i := range hs {
		var f [2]string
		for j := range f {
			l, m := binary.Uvarint(b[n+q:])
			q += m
			f[j] = s[q : q+int(l)]
			q += int(l)
		}
		hs[i] = Header{Name: f[0], Value: f[1]}
	}
	return hs, p, nil
}

// Scan checks the list at the start of b as Decode does, without
// allocating, and returns the number of bytes it takes.
func Scan(b []byte) (int, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 || n != uvarintLen(count) {
		return 0, fmt.Errorf("%w: bad header count", ErrInvalid)
	}
	// Each header takes at least three bytes: a name length, a name byte
	// (an empty name is refused) and a value length.
	if count == 0 || count > StoredCount || count > uint64(len(b)-n)/3 {
		return 0, fmt.Errorf("%w: %d headers cannot fit %d bytes", ErrInvalid, count, len(b)-n)
	}
	p, total := n, 0
	for i := uint64(0); i < count; i++ {
		for field, limit := range [2]uint64{MaxName, MaxValue} {
			l, m := binary.Uvarint(b[p:])
			if m <= 0 || m != uvarintLen(l) { // one encoding per list: no overlong lengths
				return 0, fmt.Errorf("%w: header %d: bad length", ErrInvalid, i)
			}
			p += m
			if l > limit || l > uint64(len(b)-p) || field == 0 && l == 0 {
				return 0, fmt.Errorf("%w: header %d: length %d out of bounds", ErrInvalid, i, l)
			}
			p += int(l)
			total += int(l)
		}
		if total > StoredBytes {
			return 0, fmt.Errorf("%w: headers over %d bytes", ErrInvalid, StoredBytes)
		}
	}
	return p, nil
}

// Bytes is the sum of hs's name and value lengths (the 16 KiB rule's measure).
func Bytes(hs []Header) int {
	n := 0
	for _, h := range hs {
		n += len(h.Name) + len(h.Value)
	}
	return n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// CheckStored checks only what Decode checks — the sizes — so a list that
// passes it reads back from a log: the last guard before a commit, cheap
// enough to run on every one (no syntax, no sort).
func CheckStored(hs []Header) error {
	if len(hs) > StoredCount {
		return fmt.Errorf("%w: %d headers, at most %d stored", ErrInvalid, len(hs), StoredCount)
	}
	total := 0
	for _, h := range hs {
		if len(h.Name) == 0 || len(h.Name) > MaxName || len(h.Value) > MaxValue {
			return fmt.Errorf("%w %.32q: name of %d bytes or value of %d bytes out of bounds", ErrInvalid, h.Name, len(h.Name), len(h.Value))
		}
		total += len(h.Name) + len(h.Value)
	}
	if total > StoredBytes {
		return fmt.Errorf("%w: headers of %d bytes, at most %d stored", ErrInvalid, total, StoredBytes)
	}
	return nil
}
