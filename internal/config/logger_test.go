package config

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// keysOf decodes one JSON object's top-level keys in order, repeats kept
// (encoding/json's Unmarshal would silently keep the last).
func keysOf(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %q", line)
	}
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
	return keys
}

func jsonConfig() Config {
	c := Default()
	c.Log = LogConfig{Level: "info", Format: "json"}
	return c
}

// A component's logger carries component=<its name>; a library adapter
// under it adds its own component: the record says it once, the innermost
// value.
func TestLogRecordsHaveEachKeyOnce(t *testing.T) {
	var buf bytes.Buffer
	log := NewLoggerTo(&buf, jsonConfig())
	log.With("component", "meta").With("node", "n1").Warn("from raft", "component", "raft", "k", 1, "k", 2)
	line := strings.TrimSpace(buf.String())
	seen := map[string]bool{}
	for _, k := range keysOf(t, line) {
		if seen[k] {
			t.Errorf("key %q twice in %s", k, line)
		}
		seen[k] = true
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["component"] != "raft" || rec["k"] != float64(2) || rec["node"] != "n1" {
		t.Errorf("record %s: want component=raft (the record's own), k=2 (the last), node=n1", line)
	}

	// A With that repeats a key replaces it too.
	buf.Reset()
	log.With("component", "http").With("component", "rpc").Info("x")
	if keys := keysOf(t, strings.TrimSpace(buf.String())); strings.Count(strings.Join(keys, ","), "component") != 1 ||
		!strings.Contains(buf.String(), `"component":"rpc"`) {
		t.Errorf("With twice: %s", buf.String())
	}
}

// Durations read as durations in JSON, not as nanoseconds.
func TestLogDurationsAreStrings(t *testing.T) {
	var buf bytes.Buffer
	NewLoggerTo(&buf, jsonConfig()).With("every", time.Minute).Info("draining", "grace", 10*time.Second, "took", 1500*time.Microsecond)
	for _, want := range []string{`"grace":"10s"`, `"took":"1.5ms"`, `"every":"1m0s"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log line lacks %s: %s", want, buf.String())
		}
	}
}

// Groups still nest (their keys are not top-level).
func TestLogGroupsStillNest(t *testing.T) {
	var buf bytes.Buffer
	NewLoggerTo(&buf, jsonConfig()).With("component", "x").WithGroup("g").Info("m", "a", 1)
	if !strings.Contains(buf.String(), `"component":"x","g":{"a":1}`) {
		t.Errorf("grouped record: %s", buf.String())
	}
}
