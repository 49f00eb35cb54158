package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// parseDuration is time.ParseDuration plus a "d" (24h) unit, because
// retention is naturally said in days: "7d", "1d12h", "1.5d". A bare number
// is refused rather than guessed at: 30 seconds or 30 milliseconds?
func parseDuration(s string) (time.Duration, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty duration")
	}
	if s == "0" {
		return 0, nil
	}
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
	}
	bad := fmt.Errorf("invalid duration %q (want e.g. 30s, 12h, 7d)", orig)
	tooLong := fmt.Errorf("duration %q is too long", orig)
	var total int64 // nanoseconds, summed exactly with overflow checks
	for s != "" {
		i := 0
		for i < len(s) && (s[i] == '.' || (s[i] >= '0' && s[i] <= '9')) {
			i++
		}
		if i == 0 {
			return 0, bad
		}
		num := s[:i]
		s = s[i:]
		j := 0
		for j < len(s) && s[j] != '.' && (s[j] < '0' || s[j] > '9') {
			j++
		}
		unit := s[:j]
		s = s[j:]
		if unit == "" {
			return 0, fmt.Errorf("missing unit in duration %q (want e.g. 30s, 12h, 7d)", orig)
		}
		var part int64
		if unit == "d" {
			// Days become hours, which time.ParseDuration reads exactly
			// (fractions included) and range-checks.
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, bad
			}
			if f*24 > float64(math.MaxInt64/int64(time.Hour)) {
				return 0, tooLong
			}
			unit, num = "h", strconv.FormatFloat(f*24, 'f', -1, 64)
		}
		d, err := time.ParseDuration(num + unit)
		if err != nil {
			if strings.Contains(err.Error(), "overflow") {
				return 0, tooLong
			}
			return 0, bad
		}
		part = int64(d)
		if total > math.MaxInt64-part {
			return 0, tooLong
		}
		total += part
	}
	if neg {
		total = -total
	}
	return time.Duration(total), nil
}

// formatDuration prints compactly in the units parseDuration reads:
// "7d", "1d12h", "1h30m", "45s", "1.5s", "250ms". Zero units are left out,
// unlike time.Duration's "1h0m0s".
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var sb strings.Builder
	if d < 0 {
		sb.WriteByte('-')
		d = -d
	}
	for _, u := range []struct {
		size time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}} {
		if n := d / u.size; n > 0 {
			sb.WriteString(strconv.FormatInt(int64(n), 10) + u.name)
			d -= n * u.size
		}
	}
	if d > 0 {
		sb.WriteString(d.String()) // below a minute: "45s", "1.5s", "250ms"
	}
	return sb.String()
}

// formatMs is formatDuration for the API's millisecond fields.
func formatMs(ms int64) string {
	return formatDuration(time.Duration(ms) * time.Millisecond)
}

// durationValue is a pflag.Value using parseDuration, so a bad --retention
// fails while parsing flags, with the flag's name in the message.
type durationValue struct{ d *time.Duration }

func newDurationValue(p *time.Duration, def time.Duration) durationValue {
	*p = def
	return durationValue{p}
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("duration %q must not be negative", s)
	}
	*v.d = d
	return nil
}

// String returns "" for zero so help does not advertise a meaningless
// "(default 0s)" where zero means "server default".
func (v durationValue) String() string {
	if v.d == nil || *v.d == 0 {
		return ""
	}
	return formatDuration(*v.d)
}

func (v durationValue) Type() string { return "duration" }

// millis converts a flag duration to the API's milliseconds, refusing a
// positive value that would round down to 0 and silently mean "default".
func millis(flag string, d time.Duration) (int64, error) {
	if d > 0 && d < time.Millisecond {
		return 0, fmt.Errorf("--%s %s is below the 1ms resolution", flag, d)
	}
	return d.Milliseconds(), nil
}
