package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/narad-io/narad/internal/duration"
)

// The parsers below take text from any layer (file values are turned into
// text first), so a value means the same wherever it is written.

func parseInt(text string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", text)
	}
	return n, nil
}

func parseDuration(text string) (time.Duration, error) {
	d, err := duration.Parse(strings.TrimSpace(text))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (want e.g. \"10s\", \"500ms\", \"2m\", \"7d\")", text)
	}
	return d, nil
}

// parseMillis reads a *_MS setting: a bare integer is milliseconds (what the
// name promises), anything else must be a duration string.
func parseMillis(text string) (time.Duration, error) {
	d, err := duration.ParseMillis(strings.TrimSpace(text))
	if err != nil {
		return 0, fmt.Errorf("%q is neither milliseconds nor a duration (want e.g. 30000 or \"30s\")", text)
	}
	return d, nil
}

// splitList splits a comma list, trimming space and dropping empty items so
// "a, b," means [a b].
func splitList(text string) []string {
	var out []string
	for _, item := range strings.Split(text, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
