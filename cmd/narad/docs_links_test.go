package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown link or image target that is not a URL or an
// anchor of the same page.
var mdLink = regexp.MustCompile(`\]\(([^)#\s:]+)(#[^)\s]*)?\)`)

// TestDocsLinks: every relative link of README.md and docs/*.md names a
// file of the repository, so a page moved or renamed leaves no dead link
// behind.
func TestDocsLinks(t *testing.T) {
	links := 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				links++
				target := filepath.Join(repoRoot, filepath.Dir(file), filepath.FromSlash(m[1]))
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d: a link to %s, which does not exist", file, i+1, m[1])
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative link found: the scan is broken")
	}
}

// TestCIRunsTheReadmeTestCommand: the README gives one command that runs
// the tests, and CI (.ci/run) must run exactly that command, so what a
// contributor runs is what CI judges.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n## The two commands\n")
	if !ok {
		t.Fatal(`README.md has no "## The two commands" section`)
	}
	section, _, _ := strings.Cut(after, "\n## ")
	blocks, err := fencedBlocks(section)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, blk := range blocks {
		if isShell(blk.lang) {
			cmds = append(cmds, strings.TrimSpace(blk.text))
		}
	}
	if len(cmds) != 2 || !strings.HasPrefix(cmds[0], "go run ./cmd/narad ") {
		t.Fatalf("the two commands are %q: want the command that runs a node, then the one that runs the tests", cmds)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	runs := false
	for _, line := range strings.Split(string(ci), "\n") {
		line = strings.TrimSpace(line)
		if line == cmds[1] || line == "exec "+cmds[1] {
			runs = true
		}
	}
	if !runs {
		t.Errorf(".ci/run does not run the README's test command %q:\n%s", cmds[1], ci)
	}
}
