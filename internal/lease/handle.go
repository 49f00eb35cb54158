package lease

import (
	"fmt"
	"math"
	"strconv"
)

// MaxPartition is the largest partition number a handle may carry. It is
// fixed at MaxInt32 (not MaxInt) so that a handle means the same thing on
// every platform.
const MaxPartition = math.MaxInt32

// maxHandleLen is the longest canonical handle: 10 digits of partition,
// two 20-digit uint64s and two separators. Longer input is rejected before
// any parsing work.
const maxHandleLen = 10 + 1 + 20 + 1 + 20

// FormatHandle renders the receipt handle "partition:offset:nonce" in
// canonical decimal. Clients treat it as opaque. partition must be in
// [0, MaxPartition]; otherwise the result will not parse.
func FormatHandle(partition int, offset, nonce uint64) string {
	b := make([]byte, 0, maxHandleLen)
	b = strconv.AppendInt(b, int64(partition), 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, offset, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, nonce, 10)
	return string(b)
}

// ParseHandle is the strict inverse of FormatHandle: it accepts exactly
// the strings FormatHandle produces for a partition in [0, MaxPartition]
// and nothing else. Because handles come from clients, anything
// non-canonical (signs, leading zeros, spaces, empty or extra fields,
// overflow) is rejected rather than normalised, so that one lease has one
// spelling. Errors are *HandleError (errors.Is ErrBadHandle).
func ParseHandle(s string) (partition int, offset, nonce uint64, err error) {
	if len(s) > maxHandleLen {
		return 0, 0, 0, badHandle("longer than %d bytes", maxHandleLen)
	}
	var fields [3]string
	n := 0
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != ':' {
			continue
		}
		if n == len(fields) {
			return 0, 0, 0, badHandle("more than 3 fields")
		}
		fields[n] = s[start:i]
		n++
		start = i + 1
	}
	if n != len(fields) {
		return 0, 0, 0, badHandle("want 3 fields partition:offset:nonce, got %d", n)
	}
	p, err := parseCanonicalUint(fields[0], "partition")
	if err != nil {
		return 0, 0, 0, err
	}
	if p > MaxPartition {
		return 0, 0, 0, badHandle("partition %d above %d", p, MaxPartition)
	}
	if offset, err = parseCanonicalUint(fields[1], "offset"); err != nil {
		return 0, 0, 0, err
	}
	if nonce, err = parseCanonicalUint(fields[2], "nonce"); err != nil {
		return 0, 0, 0, err
	}
	return int(p), offset, nonce, nil
}

// badHandle is a *HandleError with a formatted reason.
func badHandle(format string, args ...any) error {
	return &HandleError{Reason: fmt.Sprintf(format, args...)}
}

// parseCanonicalUint parses a non-empty run of ASCII digits without a
// leading zero (except "0" itself) into a uint64, rejecting overflow.
// strconv.ParseUint is not used because it accepts leading zeros.
func parseCanonicalUint(s, what string) (uint64, error) {
	if s == "" {
		return 0, badHandle("empty %s", what)
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, badHandle("%s has a leading zero", what)
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, badHandle("%s is not a decimal number", what)
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, badHandle("%s overflows uint64", what)
		}
		v = v*10 + d
	}
	return v, nil
}
