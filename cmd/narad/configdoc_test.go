package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated part of docs/configuration.md")

const configDoc = "../../docs/configuration.md"

// TestConfigurationDoc holds the settings table in docs/configuration.md
// to configReference's output, so a setting added, renamed or re-defaulted
// without regenerating the page fails here. -update rewrites the part
// between the markers and leaves the prose around it alone.
func TestConfigurationDoc(t *testing.T) {
	data, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	before, rest, ok1 := strings.Cut(doc, configDocBegin+"\n")
	got, after, ok2 := strings.Cut(rest, configDocEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q around the generated table", configDoc, configDocBegin, configDocEnd)
	}
	want := configReference()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(configDoc, []byte(before+configDocBegin+"\n"+want+configDocEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date with the settings table: run `go generate ./cmd/narad/` and commit the result", configDoc)
}
