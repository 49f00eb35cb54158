package clientmod_test

import (
	"bytes"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDocsGoBlocksCompile compiles every ```go block of README.md and
// docs/*.md against the client as it is, as another module would import
// it, so an example a reader copies cannot drift from the API.
//
// The convention a block follows:
//
//   - A block that begins with a package clause is a whole file and is
//     compiled as it stands.
//   - A block that imports the AWS SDK is left to test/awsmod, which
//     runs it against a node.
//   - Any other block is the body of func(ctx context.Context) error: it
//     may use ctx, and it returns an error (so it ends with a return).
//     It is given the imports of the packages it names among
//     wrapImports; a block that needs another package is written as a
//     whole file.
//
// Text that is not meant to compile goes in a block of another language
// (```text). Each block is compiled in a package of its own, under a
// //line directive, so a compile error names the Markdown file and line.
func TestDocsGoBlocksCompile(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []goBlock
	for _, path := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		found, err := goBlocks(filepath.ToSlash(rel), string(b))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, found...)
	}
	if len(blocks) == 0 {
		t.Fatal("no ```go block in README.md or docs/: the extraction is broken (docs/getting-started.md has one)")
	}

	mod := t.TempDir()
	gomod := fmt.Sprintf("module example.com/docblocks\n\ngo 1.26.0\n\nrequire github.com/narad-io/narad v0.0.0-00010101000000-000000000000\n\nreplace github.com/narad-io/narad => %s\n", root)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		dir := filepath.Join(mod, fmt.Sprintf("block%d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "block.go"), []byte(b.source()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// -o into a directory: several main packages are built at once, and
	// their binaries land in the test's temporary directory.
	cmd := exec.Command("go", "build", "-o", t.TempDir()+string(filepath.Separator), "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return
	}
	failed := 0
	for _, b := range blocks {
		if b.named(out) {
			t.Errorf("%s:%d: the ```go block starting here does not compile", b.file, b.fence)
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("building the blocks failed, naming none of them: %v", err)
	}
	t.Logf("go build:\n%s\n(a block is a whole file with its package clause, or the body of func(ctx context.Context) error; see this test's comment)", out)
}

// goBlock is one ```go block of a Markdown file.
type goBlock struct {
	file  string // slash-separated, relative to the repository
	fence int    // line of the opening ```go
	body  string
}

// fenceRE opens or closes a fenced block; the opening one may name a
// language.
var fenceRE = regexp.MustCompile("^ {0,3}(```+)\\s*([A-Za-z0-9_+-]*)")

// goBlocks returns the ```go blocks of a Markdown text. An unclosed block
// is an error: the rest of the file would be read as code.
func goBlocks(file, text string) ([]goBlock, error) {
	var out []goBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		open, lang := i, m[2]
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if c := fenceRE.FindStringSubmatch(lines[i]); c != nil && c[2] == "" && len(c[1]) >= len(m[1]) {
				closed = true
				break
			}
			body = append(body, lines[i])
		}
		if !closed {
			return nil, fmt.Errorf("%s:%d: a ``` block that never closes", file, open+1)
		}
		src := strings.Join(body, "\n")
		if lang == "go" && !strings.Contains(src, awsSDK) {
			out = append(out, goBlock{file: file, fence: open + 1, body: src})
		}
	}
	return out, nil
}

// awsSDK marks a block that uses the AWS SDK (docs/aws.md): test/awsmod,
// which has the SDK in its go.mod, compiles and runs those.
const awsSDK = `"github.com/aws/aws-sdk-go-v2/`

// wrapImports are the packages a function-body block may name without
// writing its imports: the package name as written, and its import path.
var wrapImports = map[string]string{
	"client":  "github.com/narad-io/narad/client",
	"context": "context",
	"errors":  "errors",
	"fmt":     "fmt",
	"http":    "net/http",
	"io":      "io",
	"json":    "encoding/json",
	"log":     "log",
	"os":      "os",
	"strings": "strings",
	"time":    "time",
}

// isFile reports whether the block is a whole file: its first token is
// the package clause.
func (b goBlock) isFile() bool {
	_, tok := scanBody(b.body, 1)
	return len(tok) > 0 && tok[0] == token.PACKAGE
}

// source is the block as a file: as it stands, or wrapped into a function
// of package main. The //line directive makes the compiler count lines
// from the Markdown file's own.
func (b goBlock) source() string {
	directive := fmt.Sprintf("//line %s:%d:1\n", b.file, b.fence+1)
	if b.isFile() {
		return directive + b.body + "\n"
	}
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, path := range b.imports() {
		fmt.Fprintf(&src, "\t%q\n", path)
	}
	src.WriteString(")\n\nfunc main() {}\n\nfunc block(ctx context.Context) error {\n")
	src.WriteString(directive + b.body + "\n}\n")
	return src.String()
}

// imports are the import paths of the wrapImports a body names as
// pkg.Name (scanned as Go tokens, so comments and strings do not count),
// and context, which the wrapper's signature uses.
func (b goBlock) imports() []string {
	set := map[string]bool{"context": true}
	lits, toks := scanBody(b.body, -1)
	for i := 0; i+1 < len(toks); i++ {
		if toks[i] != token.IDENT || toks[i+1] != token.PERIOD || (i > 0 && toks[i-1] == token.PERIOD) {
			continue
		}
		if path, ok := wrapImports[lits[i]]; ok {
			set[path] = true
		}
	}
	var out []string
	for path := range set {
		out = append(out, path)
	}
	sort.Strings(out)
	return out
}

// scanBody returns up to n tokens of src (all when n < 0) and their
// text. Scan errors are left to the compiler, which names their line.
func scanBody(src string, n int) ([]string, []token.Token) {
	var s scanner.Scanner
	fs := token.NewFileSet()
	s.Init(fs.AddFile("block", -1, len(src)), []byte(src), nil, 0)
	var lits []string
	var toks []token.Token
	for n < 0 || len(toks) < n {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if lit == "" {
			lit = tok.String()
		}
		lits, toks = append(lits, lit), append(toks, tok)
	}
	return lits, toks
}

// named reports whether the build output names a line of the block, or
// the closing fence (where a wrapped body's "missing return" lands).
func (b goBlock) named(out []byte) bool {
	closing := b.fence + strings.Count(b.body, "\n") + 2
	for line := b.fence + 1; line <= closing; line++ {
		if bytes.Contains(out, fmt.Appendf(nil, "%s:%d:", b.file, line)) {
			return true
		}
	}
	return false
}
