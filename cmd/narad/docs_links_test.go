package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link or image target that is not a URL: a path,
// an anchor in it, or an anchor of the same page alone.
var mdLink = regexp.MustCompile(`\]\(([^)#\s:]*)(#[^)\s]*)?\)`)

// TestDocsLinks: every relative link of README.md and docs/*.md names a
// file of the repository, and every #anchor of a link to a Markdown page
// (that page or another) one of its headings, so a page moved or
// renamed, or a section renamed or moved to another page, leaves no dead
// link behind.
func TestDocsLinks(t *testing.T) {
	links, anchors := 0, 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				if m[1] == "" && m[2] == "" {
					continue // "]()": not a link
				}
				links++
				target := filepath.Join(repoRoot, filepath.Dir(file), filepath.FromSlash(m[1]))
				if m[1] == "" {
					target = filepath.Join(repoRoot, file) // an anchor of this page
				}
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d: a link to %s, which does not exist", file, i+1, m[1])
					continue
				}
				if m[2] == "" || !strings.HasSuffix(target, ".md") {
					continue
				}
				anchors++
				if !headingAnchors(t, target)[strings.TrimPrefix(m[2], "#")] {
					t.Errorf("%s:%d: a link to %s%s, and %s has no such heading", file, i+1, m[1], m[2], filepath.Base(target))
				}
			}
		}
	}
	if links == 0 || anchors == 0 {
		t.Fatalf("%d relative links, %d of them with an anchor: the scan is broken", links, anchors)
	}
}

// TestHeadingAnchors: the anchors are the ones GitHub gives headings.
func TestHeadingAnchors(t *testing.T) {
	got := anchorsOf("# Narad beside NATS\n## 11. The leader fails over\n```\n## not a heading\n```\n" +
		"### `narad bench` — load, ×3\n## Seeing it\n## Seeing it\n")
	for _, want := range []string{"narad-beside-nats", "11-the-leader-fails-over", "narad-bench--load-3", "seeing-it", "seeing-it-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] || len(got) != 5 {
		t.Errorf("anchors %v, want only the five headings outside code blocks", got)
	}
}

var anchorCache = map[string]map[string]bool{}

// headingAnchors is anchorsOf the Markdown file path, read once.
func headingAnchors(t *testing.T, path string) map[string]bool {
	if a, ok := anchorCache[path]; ok {
		return a
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchorCache[path] = anchorsOf(string(b))
	return anchorCache[path]
}

// anchorsOf is the anchors GitHub gives the headings of a Markdown page:
// the heading's text lower-cased, without its code marks and every
// character but letters, digits, "_", "-" and spaces, its spaces turned
// into "-"; a repeated one gets "-1", "-2", ... Lines inside fenced code
// blocks are not headings.
func anchorsOf(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		h := strings.TrimLeft(line, "#")
		if fenced || h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '_', r == '-':
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
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
