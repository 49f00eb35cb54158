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
	if p, o, n, ok := parseHandleFast(s); ok {
		return p, o, n, nil
	}
	return parseHandleSlow(s)
}

// maxUint64Digits is MaxUint64 in decimal: a 20-digit field is in range
// iff it is not greater as a string (same length: string order is number
// order).
const maxUint64Digits = "18446744073709551615"

// parseHandleFast accepts exactly the canonical handles, in one pass with
// no division per digit; anything else (ok false) goes to parseHandleSlow,
// which words the refusal. Every batch ack parses a hundred handles, and
// the field split plus the per-digit overflow division of the slow path
// were ~7% of a batch consume + ack (BenchmarkParseHandle).
func parseHandleFast(s string) (partition int, offset, nonce uint64, ok bool) {
	if len(s) > maxHandleLen {
		return 0, 0, 0, false
	}
	var v [3]uint64
	i := 0
	for f := range v {
		start := i
		var x uint64
		for i < len(s) && s[i] != ':' {
			c := s[i] - '0'
			if c > 9 {
				return 0, 0, 0, false
			}
			x = x*10 + uint64(c) // wraps only past 20 digits, refused below
			i++
		}
		n := i - start
		if n == 0 || n > len(maxUint64Digits) || (n > 1 && s[start] == '0') ||
			(n == len(maxUint64Digits) && s[start:i] > maxUint64Digits) {
			return 0, 0, 0, false
		}
		v[f] = x
		if f < len(v)-1 {
			if i == len(s) {
				return 0, 0, 0, false // fewer than 3 fields
			}
			i++ // the ':'
		}
	}
	if i != len(s) || v[0] > MaxPartition {
		return 0, 0, 0, false // a fourth field, or a partition out of range
	}
	return int(v[0]), v[1], v[2], true
}

// parseHandleSlow is ParseHandle field by field, with a reason for each
// refusal.
func parseHandleSlow(s string) (partition int, offset, nonce uint64, err error) {
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
