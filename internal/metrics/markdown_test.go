package metrics

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated part of docs/metrics.md")

const metricsDoc = "../../docs/metrics.md"

// TestMetricsDoc holds the table in docs/metrics.md to Markdown's output,
// so a metric added, renamed, relabelled or re-described without
// regenerating the page fails here. -update rewrites the part between the
// markers and leaves the prose around it alone.
func TestMetricsDoc(t *testing.T) {
	data, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(data), docBegin+"\n")
	got, after, ok2 := strings.Cut(rest, docEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q around the generated table", metricsDoc, docBegin, docEnd)
	}
	want := Markdown()
	for _, line := range strings.Split(strings.TrimSpace(want), "\n")[2:] {
		if strings.HasSuffix(line, "|  |") {
			t.Errorf("no help text found for %s", line)
		}
	}
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(metricsDoc, []byte(before+docBegin+"\n"+want+docEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date with the registry: run `go generate ./internal/metrics/` and commit the result", metricsDoc)
}
