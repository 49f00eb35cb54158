package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPycheckScript runs scripts/pycheck.py, which docs/getting-started.md tells users
// to run against a node, against a fresh one: the script passing is the
// test, so it cannot drift from the server unnoticed (it once matched an
// error's wording that the server later changed).
func TestPycheckScript(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: scripts/pycheck.py is not checked (install python3 to run it)")
	}
	n := startNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, filepath.Join("..", "..", "scripts", "pycheck.py"), "http://"+n.http).CombinedOutput()
	if err != nil {
		t.Fatalf("pycheck.py: %v\n%s", err, out)
	}
	// Its last check passing shows it ran to the end rather than exiting
	// 0 early.
	if !strings.Contains(string(out), "ok   GET //v1//topics: 400") {
		t.Fatalf("pycheck.py exited 0 without its last check:\n%s", out)
	}
}
