package awsmod

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsExamples runs the Python, Node.js and Go examples of
// docs/aws.md, as written, against a node: each must print the message
// it sent and its attribute. The Python one needs boto3, the Node.js one
// @aws-sdk/client-sqs, which the test installs with npm into a temporary
// directory (from npm's cache after the first run).
func TestDocsExamples(t *testing.T) {
	blocks := docBlocks(t, filepath.Join("..", "..", "docs", "aws.md"))
	n := startNode(t)
	env := append(os.Environ(), "NARAD_URL="+n.url())
	run := func(t *testing.T, want string, cmd *exec.Cmd) {
		t.Helper()
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
		if !strings.Contains(string(out), want) {
			t.Fatalf("%v printed %q, want it to print %q", cmd.Args, out, want)
		}
	}
	t.Run("python", func(t *testing.T) {
		dir := t.TempDir()
		f := filepath.Join(dir, "example.py")
		writeFile(t, f, blocks["python"])
		run(t, "hi from python python", exec.Command("python3", f))
	})
	t.Run("node", func(t *testing.T) {
		dir := t.TempDir()
		install := exec.Command("npm", "install", "--no-audit", "--no-fund", "--silent", "@aws-sdk/client-sqs")
		install.Dir = dir
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("npm install @aws-sdk/client-sqs: %v\n%s", err, out)
		}
		f := filepath.Join(dir, "example.mjs")
		writeFile(t, f, blocks["js"])
		run(t, "hi from node node", exec.Command("node", f))
	})
	t.Run("go", func(t *testing.T) {
		// Inside this module, which has the SDK in its go.mod.
		dir, err := os.MkdirTemp(".", "docexample-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		writeFile(t, filepath.Join(dir, "main.go"), blocks["go"])
		run(t, "hi from go go", exec.Command("go", "run", "./"+filepath.Base(dir)))
	})
}

var fence = regexp.MustCompile("(?s)```(python|js|go)\n(.*?)\n```")

// docBlocks is the one block of each language in the page.
func docBlocks(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range fence.FindAllStringSubmatch(string(b), -1) {
		if _, twice := out[m[1]]; twice {
			t.Fatalf("%s has two %s blocks; the test runs one of each", path, m[1])
		}
		out[m[1]] = m[2] + "\n"
	}
	for _, lang := range []string{"python", "js", "go"} {
		if out[lang] == "" {
			t.Fatalf("%s has no %s example", path, lang)
		}
	}
	return out
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(fmt.Errorf("writing %s: %w", path, err))
	}
}
