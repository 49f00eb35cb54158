package main

import (
	"fmt"
	"strings"
)

// Mutant is one breakage: in File, replace each hunk's Old with its New,
// each exactly once, and expect one of Tests to fail.
type Mutant struct {
	Name  string
	Rule  string // what the mutant breaks, for the report
	File  string // slash-separated, from the module root
	Tests []Test
	Hunks []Hunk
}

// Hunk is one exact replacement.
type Hunk struct{ Old, New string }

// Test is one `go test PACKAGE -run RUN`.
type Test struct {
	Package string
	Run     string
}

// Apply returns src with the mutant's replacements made, in order; each
// Old must occur exactly once (a list that no longer matches the code is
// an error, not a silent pass).
func (m Mutant) Apply(src string) (string, error) {
	for i, h := range m.Hunks {
		switch n := strings.Count(src, h.Old); n {
		case 1:
			src = strings.Replace(src, h.Old, h.New, 1)
		case 0:
			return "", fmt.Errorf("mutant %s: old text of hunk %d not found in %s", m.Name, i+1, m.File)
		default:
			return "", fmt.Errorf("mutant %s: old text of hunk %d found %d times in %s, want once", m.Name, i+1, n, m.File)
		}
	}
	return src, nil
}

// Parse reads a mutants file:
//
//	# a comment line (outside a block)
//	=== name
//	rule: what it breaks
//	file: internal/fanout/cursor.go
//	test: ./internal/fanout ^(TestA|TestB)$
//	test: ./test/e2e ^TestC$        (more than one: any failing catches it)
//	--- old
//	exact lines to replace
//	+++ new
//	the lines that replace them
//	--- old                         (more hunks: applied in order)
//	...
//
// The old and new blocks run to the next marker line; each keeps its
// line breaks except the trailing blank lines before the marker.
func Parse(text string) ([]Mutant, error) {
	var (
		out   []Mutant
		cur   *Mutant
		block *[]string
		old   []string
		repl  []string
	)
	endHunk := func() error {
		if block == nil {
			return nil
		}
		// Blank lines before the next marker separate hunks and mutants;
		// they are not part of either block.
		h := Hunk{Old: strings.Join(trimBlank(old), "\n"), New: strings.Join(trimBlank(repl), "\n")}
		switch {
		case h.Old == "":
			return fmt.Errorf("mutant %s: a hunk with no old text", cur.Name)
		case h.Old == h.New:
			return fmt.Errorf("mutant %s: a hunk whose new text is the old text", cur.Name)
		}
		cur.Hunks = append(cur.Hunks, h)
		block, old, repl = nil, nil, nil
		return nil
	}
	flush := func() error {
		if cur == nil {
			return nil
		}
		if err := endHunk(); err != nil {
			return err
		}
		switch {
		case cur.File == "":
			return fmt.Errorf("mutant %s: no file", cur.Name)
		case len(cur.Tests) == 0:
			return fmt.Errorf("mutant %s: no test", cur.Name)
		case len(cur.Hunks) == 0:
			return fmt.Errorf("mutant %s: no hunk", cur.Name)
		}
		for _, m := range out {
			if m.Name == cur.Name {
				return fmt.Errorf("mutant %s: name used twice", cur.Name)
			}
		}
		out = append(out, *cur)
		cur = nil
		return nil
	}
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "=== "):
			if err := flush(); err != nil {
				return nil, err
			}
			cur = &Mutant{Name: strings.TrimSpace(strings.TrimPrefix(line, "=== "))}
		case cur == nil:
			if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
				return nil, fmt.Errorf("line %d: outside a mutant: %q", i+1, line)
			}
		case line == "--- old":
			if err := endHunk(); err != nil {
				return nil, err
			}
			block = &old
		case line == "+++ new":
			if block != &old {
				return nil, fmt.Errorf("line %d: +++ new before --- old", i+1)
			}
			block = &repl
		case block != nil:
			*block = append(*block, line)
		case strings.HasPrefix(line, "rule: "):
			cur.Rule = strings.TrimPrefix(line, "rule: ")
		case strings.HasPrefix(line, "file: "):
			cur.File = strings.TrimSpace(strings.TrimPrefix(line, "file: "))
		case strings.HasPrefix(line, "test: "):
			f := strings.Fields(strings.TrimPrefix(line, "test: "))
			if len(f) != 2 {
				return nil, fmt.Errorf("line %d: want test: PACKAGE RUN-REGEXP", i+1)
			}
			cur.Tests = append(cur.Tests, Test{Package: f[0], Run: f[1]})
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
		default:
			return nil, fmt.Errorf("line %d: unknown line in mutant %s: %q", i+1, cur.Name, line)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
