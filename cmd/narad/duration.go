package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/narad-io/narad/internal/duration"
)

// formatMs prints the API's millisecond fields in the units flags take.
func formatMs(ms int64) string {
	return duration.Format(time.Duration(ms) * time.Millisecond)
}

// durationValue is a pflag.Value using the shared duration syntax (Go's
// plus "d" for days; text typed by hand is trimmed), so a bad --retention
// fails while parsing flags, with the flag's name in the message.
type durationValue struct{ d *time.Duration }

func newDurationValue(p *time.Duration, def time.Duration) durationValue {
	*p = def
	return durationValue{p}
}

func (v durationValue) Set(s string) error {
	d, err := duration.Parse(strings.TrimSpace(s))
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
	return duration.Format(*v.d)
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
