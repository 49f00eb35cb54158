package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A normal single-node start and stop, as `narad serve` runs it (security
// on, a generated password, JSON logs at info), logs nothing at WARN or
// above, writes each key of a record once, and writes durations as
// durations ("10s"), not as nanoseconds.
func TestSingleNodeLogsAreClean(t *testing.T) {
	n := startNode(t, "NARAD_SECURITY_ENABLED=true", "NARAD_LOG_FORMAT=json", "NARAD_LOG_LEVEL=info")
	eventually(t, 10*time.Second, "the root admin seeded", func() bool {
		return strings.Contains(n.logs.String(), "created the root admin")
	})
	n.stop()
	sawGrace := false
	for _, line := range strings.Split(strings.TrimSpace(n.logs.String()), "\n") {
		if generatedPassword.MatchString(line) {
			continue
		}
		keys, rec := decodeRecord(t, line)
		seen := map[string]bool{}
		for _, k := range keys {
			if seen[k] {
				t.Errorf("key %q twice in %s", k, line)
			}
			seen[k] = true
		}
		if lvl := rec["level"]; lvl != "INFO" && lvl != "DEBUG" {
			t.Errorf("a normal start logged at %v: %s", lvl, line)
		}
		if g, ok := rec["grace"]; ok {
			sawGrace = true
			if g != "10s" {
				t.Errorf("the drain's grace logged as %v, want \"10s\": %s", g, line)
			}
		}
	}
	if !sawGrace {
		t.Error("no record of the drain's grace period: the duration check saw nothing")
	}
}

// decodeRecord returns a JSON log line's top-level keys in order, repeats
// kept (a map would hide them), and the record.
func decodeRecord(t *testing.T, line string) ([]string, map[string]any) {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("not a JSON log record: %q", line)
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.Token() // {
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys, rec
}
