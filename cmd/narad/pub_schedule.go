package main

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// scheduleFlags reads --delay and --at (docs/concepts.md, "Scheduled
// delivery"): one of them, a delay at most a year, a time as RFC 3339 or
// Unix milliseconds. Neither typed: no schedule of the message's own.
func scheduleFlags(fs *pflag.FlagSet, f pubFlags) (*time.Duration, time.Time, error) {
	switch {
	case fs.Changed("delay") && fs.Changed("at"):
		return nil, time.Time{}, errors.New("--delay and --at both schedule the message: give one")
	case fs.Changed("delay"):
		if f.delay > maxDelay {
			return nil, time.Time{}, flagErr("delay", fs.Lookup("delay").Value.String(), "must be at most %s", showDuration(maxDelay))
		}
		if _, err := millis("delay", f.delay); err != nil {
			return nil, time.Time{}, err
		}
		return &f.delay, time.Time{}, nil
	case fs.Changed("at"):
		at, err := parseAt(strings.TrimSpace(f.at))
		if err != nil {
			return nil, time.Time{}, flagErr("at", first(f.at, `""`), "want an RFC 3339 time (2026-12-24T18:00:00Z) or Unix milliseconds")
		}
		return nil, at, nil
	}
	return nil, time.Time{}, nil
}

// parseAt reads a point in time as the API's Narad-Deliver-At does: a
// non-negative integer of Unix milliseconds, or RFC 3339.
func parseAt(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 && !strings.HasPrefix(s, "+") {
		return time.UnixMilli(ms), nil
	}
	return time.Parse(time.RFC3339Nano, s)
}
