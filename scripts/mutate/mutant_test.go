package main

import (
	"strings"
	"testing"
)

const sample = `# comment
=== one
rule: commit before advance — the offset never passes
file: internal/x/a.go
test: ./internal/x ^TestA$
test: ./test/e2e ^TestB$
--- old
	if a {
		b()
	}
+++ new
	b()

=== two
file: internal/x/b.go
test: ./internal/x ^TestC$
--- old
x := 1
+++ new
x := 2
--- old
y := 1
+++ new
y := 3
`

func TestParseAndApply(t *testing.T) {
	ms, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name != "one" || ms[0].Rule != "commit before advance — the offset never passes" || len(ms[0].Tests) != 2 ||
		ms[0].Tests[1].Package != "./test/e2e" || ms[0].Tests[1].Run != "^TestB$" {
		t.Fatalf("parsed %+v", ms)
	}
	if len(ms[0].Hunks) != 1 || ms[0].Hunks[0].Old != "\tif a {\n\t\tb()\n\t}" || ms[0].Hunks[0].New != "\tb()" ||
		len(ms[1].Hunks) != 2 || ms[1].Hunks[1] != (Hunk{"y := 1", "y := 3"}) {
		t.Fatalf("hunks %q, %q", ms[0].Hunks, ms[1].Hunks)
	}
	got, err := ms[0].Apply("func f() {\n\tif a {\n\t\tb()\n\t}\n}\n")
	if err != nil || got != "func f() {\n\tb()\n}\n" {
		t.Fatalf("apply: %q %v", got, err)
	}
	if got, err := ms[1].Apply("x := 1\ny := 1\n"); err != nil || got != "x := 2\ny := 3\n" {
		t.Fatalf("apply two hunks: %q %v", got, err)
	}
	if _, err := ms[1].Apply("x := 1\n"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("a mutant that no longer matches: %v", err)
	}
	if _, err := ms[1].Apply("x := 1\nx := 1\ny := 1\n"); err == nil || !strings.Contains(err.Error(), "2 times") {
		t.Fatalf("an ambiguous mutant: %v", err)
	}
}

func TestParseRefusesBrokenLists(t *testing.T) {
	for name, text := range map[string]string{
		"no test":   "=== a\nfile: f.go\n--- old\nx\n+++ new\ny\n",
		"no file":   "=== a\ntest: ./p ^T$\n--- old\nx\n+++ new\ny\n",
		"no change": "=== a\nfile: f.go\ntest: ./p ^T$\n--- old\nx\n+++ new\nx\n",
		"twice":     "=== a\nfile: f.go\ntest: ./p ^T$\n--- old\nx\n+++ new\ny\n=== a\nfile: f.go\ntest: ./p ^T$\n--- old\nx\n+++ new\ny\n",
		"stray":     "hello\n",
	} {
		if _, err := Parse(text); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
