package duration

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Day is the "d" unit. Retention is naturally said in days ("7d"); a day
// here is always 24 hours, never a calendar day.
const Day = 24 * time.Hour

// hint ends every refusal so the reader sees what is accepted.
const hint = "(want e.g. 30s, 12h, 7d)"

// ErrEmpty is the refusal of "".
var ErrEmpty = errors.New("empty duration " + hint)

// Parse reads a duration: a sequence of decimal numbers, each with an
// optional fraction and a unit ("ns", "us", "µs", "ms", "s", "m", "h",
// "d"), optionally signed as a whole ("-1h30m", "+7d"), or "0". A bare
// number is refused rather than guessed at: 30 seconds or 30 milliseconds?
func Parse(s string) (time.Duration, error) {
	if s == "" {
		return 0, ErrEmpty
	}
	rest := s
	neg := false
	if rest[0] == '-' || rest[0] == '+' {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	if rest == "0" {
		return 0, nil // time.ParseDuration's "0", "+0" and "-0"
	}
	if rest == "" {
		return 0, invalid(s)
	}
	// Summed as a negative number, as time.ParseDuration does, so the
	// whole range of time.Duration is reachable ("-9223372036854775808ns")
	// and an overflow is refused, never wrapped.
	var total time.Duration
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
		if i < 0 {
			return 0, fmt.Errorf("missing unit in duration %q %s", s, hint)
		}
		num := rest[:i]
		j := strings.IndexAny(rest[i:], ".0123456789")
		if j < 0 {
			j = len(rest) - i
		}
		unit := rest[i : i+j]
		rest = rest[i+j:]
		if !validNumber(num) || !validUnit(unit) {
			return 0, invalid(s)
		}
		part, err := negativeTerm(num, unit)
		if err != nil || part < math.MinInt64-total {
			return 0, tooLong(s)
		}
		total += part
	}
	if !neg {
		if total == math.MinInt64 {
			return 0, tooLong(s)
		}
		total = -total
	}
	return total, nil
}

// negativeTerm is minus one number with its unit. The syntax is checked
// already, so an error here is an overflow.
func negativeTerm(num, unit string) (time.Duration, error) {
	if unit != "d" {
		return time.ParseDuration("-" + num + unit)
	}
	// Days are read as hours, which time.ParseDuration reads exactly
	// (decimal fractions included), then multiplied: "0.1d" is 2h24m to
	// the nanosecond, where a float would not be.
	h, err := time.ParseDuration("-" + num + "h")
	if err != nil || h < math.MinInt64/24 {
		return 0, errors.New("overflow")
	}
	return h * 24, nil
}

// validNumber: digits with at most one '.', and at least one digit
// ("5", "1.5", ".5" and "5." as Go reads them).
func validNumber(num string) bool {
	digits := strings.Count(num, "") - 1 - strings.Count(num, ".")
	return digits > 0 && strings.Count(num, ".") <= 1
}

func validUnit(unit string) bool {
	switch unit {
	case "ns", "us", "µs", "μs", "ms", "s", "m", "h", "d":
		return true
	}
	return false
}

func invalid(s string) error {
	return fmt.Errorf("invalid duration %q %s", s, hint)
}

func tooLong(s string) error {
	return fmt.Errorf("duration %q is too long", s)
}

// maxMillis is the largest millisecond count a time.Duration holds.
const maxMillis = int64(math.MaxInt64) / int64(time.Millisecond)

// ParseMillis reads a bare (optionally signed) integer as milliseconds and
// anything else as Parse does: "30000" and "30s" are the same.
func ParseMillis(s string) (time.Duration, error) {
	if !isInteger(s) {
		// Not what strconv reads: spare its *NumError (two allocations on
		// every consume's wait=1s).
		return Parse(s)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > maxMillis || n < -maxMillis {
			return 0, fmt.Errorf("%q milliseconds is out of range", s)
		}
		return time.Duration(n) * time.Millisecond, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q milliseconds is out of range", s)
	}
	return Parse(s)
}

// isInteger reports whether s is what strconv.ParseInt(s, 10, 64) reads
// (an optional sign and one or more ASCII digits), range aside.
func isInteger(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Format prints d compactly in the units Parse reads: "7d", "1d12h",
// "1h30m", "45s", "1.5s", "250ms". Zero units are left out, unlike
// time.Duration's "1h0m0s".
func Format(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var sb strings.Builder
	u := uint64(d) // magnitude; math.MinInt64 has none as an int64
	if d < 0 {
		sb.WriteByte('-')
		u = -u
	}
	for _, unit := range []struct {
		size time.Duration
		name string
	}{{Day, "d"}, {time.Hour, "h"}, {time.Minute, "m"}} {
		if n := u / uint64(unit.size); n > 0 {
			sb.WriteString(strconv.FormatUint(n, 10) + unit.name)
			u -= n * uint64(unit.size)
		}
	}
	if u > 0 {
		sb.WriteString(time.Duration(u).String()) // below a minute: "45s", "1.5s", "250ms"
	}
	return sb.String()
}
