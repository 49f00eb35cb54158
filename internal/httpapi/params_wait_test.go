package httpapi

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// The wait parameter takes the shared duration syntax (package duration)
// or integer milliseconds, and refuses what neither reads or what would
// not fit a time.Duration.
func TestParseWait(t *testing.T) {
	for raw, want := range map[string]time.Duration{
		"":                0,
		"wait=500ms":      500 * time.Millisecond,
		"wait=10s":        10 * time.Second,
		"wait=1500":       1500 * time.Millisecond,
		"wait=%2B5":       5 * time.Millisecond, // "+5", as strconv read it before
		"wait=1h2m":       62 * time.Minute,
		"wait=0":          0,
		"wait=1d":         24 * time.Hour, // capped later by the route, like any long wait
		"wait=.5s":        500 * time.Millisecond,
		"wait=1%C2%B5s":   time.Microsecond,
		"wait=9223372036": 9223372036 * time.Millisecond,
	} {
		got, err := parseWait((&url.URL{RawQuery: raw}).Query())
		if err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", raw, got, err, want)
		}
	}
	for raw, says := range map[string]string{
		"wait=-1":    "must not be negative",
		"wait=-1s":   "want a duration", // as before: only a negative integer is said to be negative
		"wait=1e3":   "want a duration",
		"wait=":      "want a duration",
		"wait=%205s": "want a duration", // no trimming on the API
		"wait=soon":  "wait=1 is 1 ms",  // the refusal says how a bare number reads
		"wait=7":     "",                // bare integers are milliseconds: accepted (listed to keep the rule visible)
		// Past time.Duration's range in milliseconds: it used to wrap
		// around (this one to a negative wait) instead of being refused.
		"wait=9223372036855":        "want a duration",
		"wait=18446744073709552":    "want a duration",
		"wait=99999999999999999999": "want a duration",
	} {
		got, err := parseWait((&url.URL{RawQuery: raw}).Query())
		if says == "" {
			if err != nil {
				t.Errorf("%s: %v", raw, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted as %v, want a 400 saying %q", raw, got, says)
			continue
		}
		clientErr(t, "wait", err)
		if !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %q, want it to say %q", raw, err, says)
		}
	}
}
