package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bareNarad finds narad in a command's place on a shell line: at the
// start, or after a pipe, &&, ||, ; or $(.
var bareNarad = regexp.MustCompile(`(^|\||&&|;|\$\()\s*narad(\s|$)`)

// TestReadmeShellBlocksRunTheBuiltBinary: the README's first session
// builds ./narad and runs it as such; a later block that says a bare
// narad fails for a reader who followed it ("command not found"), or
// runs some other narad on the PATH. (go install is mentioned for those
// who want one there.)
func TestReadmeShellBlocksRunTheBuiltBinary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	inShell := false
	checked := 0
	for i, line := range strings.Split(string(b), "\n") {
		if fence, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			inShell = !inShell && fence == "sh"
			continue
		}
		if !inShell {
			continue
		}
		checked++
		if bareNarad.MatchString(line) {
			t.Errorf("README.md:%d runs a bare narad; the README builds ./narad: %s", i+1, line)
		}
	}
	if checked == 0 {
		t.Fatal("no ```sh block found in README.md: the scan is broken")
	}
}
