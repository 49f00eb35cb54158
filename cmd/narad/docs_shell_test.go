package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDocsShellBlocks checks every shell block of README.md and
// docs/*.md (```sh, ```bash, ```shell, and the "$ " lines of ```console)
// against what it names, without running anything:
//
//   - a narad command line (narad, ./narad, go run ./cmd/narad) must
//     name a command the CLI has, with flags that command takes, values
//     those flags accept, and as many arguments as it wants: cobra's own
//     Find, ParseFlags and argument checks, on a fresh command tree;
//   - a file whose blocks build ./narad (go build -o narad) runs that
//     ./narad everywhere: a bare narad would fail for a reader who
//     followed it ("command not found"), or run another narad on the PATH;
//   - a curl line must name a route of the OpenAPI document, with a method
//     and query parameters that route takes;
//   - a script of the repository (./scripts/...) must exist;
//   - any other program must be one of shellExempt, which says why it is
//     not checked further.
//
// Every fenced block must name its language, so a shell block cannot hide
// in an unlabelled one.
func TestDocsShellBlocks(t *testing.T) {
	files := docFiles(t)
	api := loadRoutes(t)
	checked := map[string]int{}
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := fencedBlocks(string(b))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		builds := false
		for _, blk := range blocks {
			if blk.lang == "" {
				t.Errorf("%s:%d: a fenced block without a language (say ```sh, ```text, ```json …)", file, blk.line)
			}
			if isShell(blk.lang) && strings.Contains(blk.text, "go build -o narad ") {
				builds = true
			}
		}
		for _, blk := range blocks {
			if !isShell(blk.lang) {
				continue
			}
			cmds, err := shellCommands(shellText(blk))
			if err != nil {
				t.Errorf("%s:%d: %v", file, blk.line, err)
				continue
			}
			for _, c := range cmds {
				where := fmt.Sprintf("%s:%d", file, blk.line+c.line)
				if err := checkCommand(c.words, builds, api); err != nil {
					t.Errorf("%s: %s\n\t%v", where, strings.Join(c.words, " "), err)
				}
				if len(c.words) > 0 {
					checked[program(c.words)]++
				}
			}
		}
	}
	// The extraction itself: the README's first session has both.
	if checked["narad"] == 0 || checked["curl"] == 0 {
		t.Fatalf("found %d narad and %d curl command lines in %d files: the extraction is broken", checked["narad"], checked["curl"], len(files))
	}
	t.Logf("checked command lines: %v", checked)
}

// TestDocsShellCheckFails: the check refuses what it is there to refuse,
// so a broken check cannot pass every block by accident.
func TestDocsShellCheckFails(t *testing.T) {
	api := loadRoutes(t)
	bad := []string{
		"./narad topic add orders --partitions 6 --bogus-flag 1", // no such flag
		"./narad topic frobnicate orders",                        // no such command
		"./narad topic add",                                      // a missing argument
		"./narad topic add orders --retention soon",              // a value the flag refuses
		"./narad topic",                                          // a group, not a command
		"narad topic ls",                                         // bare, where ./narad is built
		"curl -XPOST localhost:7942/v1/topics/orders/frobnicate", // no such route
		"curl -XDELETE localhost:7942/v1/topics/orders/produce",  // a method the route does not take
		"curl 'localhost:7942/v1/topics/orders/consume?wiat=5s'", // a query parameter it does not take
		"./scripts/no-such-script.sh",                            // no such file
		"rm -rf data",                                            // a program nobody exempted
	}
	for _, line := range bad {
		cmds, err := shellCommands(line)
		if err != nil || len(cmds) != 1 {
			t.Fatalf("%s: %d commands, %v", line, len(cmds), err)
		}
		if err := checkCommand(cmds[0].words, true, api); err == nil {
			t.Errorf("%s: passed the check", line)
		}
	}
	good := []string{
		"go run ./cmd/narad server start --dev",
		"./narad -s http://127.0.0.1:8042 topic add orders --partitions 6 --replication-factor 3",
		"./narad serve --help",
		"./narad completion bash",
		"curl -i -XPOST \"localhost:7942/v1/topics/events/ack?receipt_handle=$handle\"",
	}
	for _, line := range good {
		cmds, err := shellCommands(line)
		if err != nil || len(cmds) != 1 {
			t.Fatalf("%s: %d commands, %v", line, len(cmds), err)
		}
		if err := checkCommand(cmds[0].words, true, api); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
}

// repoRoot is the repository, from this package's directory.
var repoRoot = filepath.Join("..", "..")

// docFiles is README.md and docs/*.md, relative to the repository.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v (%d files)", err, len(docs))
	}
	files := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(repoRoot, d)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// shellExempt are the programs a shell block may run besides narad, curl
// and the repository's scripts, each with why it is not checked further.
var shellExempt = map[string]string{
	"go":      "the Go toolchain: its flags are Go's, and the packages it names are compiled by the suite",
	"make":    "the Makefile's targets, which CONTRIBUTING.md lists",
	"docker":  "builds and runs the image; the Dockerfile is checked by test/deploy",
	"helm":    "installs the chart, which scripts/helm-check.sh lints and tests",
	"echo":    "feeds standard input to the next command",
	"printf":  "feeds standard input to the next command",
	"sed":     "extracts a field from an answer",
	"head":    "trims an answer",
	"source":  "loads a completion script printed by narad (checked itself)",
	"git":     "names the commit a build records",
	"python3": "runs scripts/pycheck.py, which the suite runs (TestPycheckScript)",
	"export":  "sets an environment variable for the commands that follow (the AWS SDKs read AWS_ENDPOINT_URL)",
	"cd":      "enters a nested module of the repository (test/awsmod) for the go command that follows",
}

// program is the name a command line runs, for counting: narad for any
// spelling of it.
func program(words []string) string {
	if _, ok := naradArgs(words); ok {
		return "narad"
	}
	return words[0]
}

// naradArgs returns the arguments of a narad command line.
func naradArgs(words []string) ([]string, bool) {
	switch {
	case words[0] == "narad" || words[0] == "./narad":
		return words[1:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/narad":
		return words[3:], true
	}
	return nil, false
}

// checkCommand checks one simple command (its words, environment
// assignments already dropped).
func checkCommand(words []string, buildsNarad bool, api routes) error {
	if len(words) == 0 {
		return nil
	}
	if args, ok := naradArgs(words); ok {
		if words[0] == "narad" && buildsNarad {
			return errors.New("runs a bare narad; this page builds ./narad and runs that")
		}
		return checkNarad(args)
	}
	switch p := words[0]; {
	case p == "curl":
		return api.checkCurl(words[1:])
	case strings.HasPrefix(p, "./scripts/") || strings.HasPrefix(p, "scripts/"):
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(p))); err != nil {
			return fmt.Errorf("no script %s in the repository", p)
		}
		return nil
	case shellExempt[p] != "":
		return nil
	default:
		return fmt.Errorf("%s is neither narad, curl, a script of the repository nor exempt (shellExempt, with a reason)", p)
	}
}

// checkNarad parses a narad command line against a fresh command tree,
// as Execute would, without running it.
func checkNarad(args []string) error {
	a := &app{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		lookupEnv: func(string) (string, bool) { return "", false },
		home:      func() (string, error) { return "", errors.New("no home in a docs check") },
		now:       time.Now,
	}
	root := a.rootCmd()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if help, err := cmd.Flags().GetBool("help"); err == nil && help {
		return nil
	}
	if v := cmd.Flags().Lookup("version"); v != nil && v.Changed {
		return nil
	}
	pos := cmd.Flags().Args()
	switch {
	case !cmd.Runnable():
		return fmt.Errorf("%s is a group of commands, not one (%v)", cmd.CommandPath(), pos)
	case cmd.HasSubCommands() && cmd.Args == nil && len(pos) > 0:
		return fmt.Errorf("%s has no command %q", cmd.CommandPath(), pos[0])
	}
	if err := cmd.ValidateArgs(pos); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}

// routes are the OpenAPI document's paths: for each, the methods it takes
// and the query parameters of each method.
type routes map[string]map[string][]string

// loadRoutes reads the committed OpenAPI document (a test in
// internal/httpapi holds it to the server's routes).
func loadRoutes(t *testing.T) routes {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "internal", "httpapi", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	type param struct {
		Ref  string `json:"$ref"`
		Name string `json:"name"`
		In   string `json:"in"`
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]param `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	queries := func(ps []param) []string {
		var out []string
		for _, p := range ps {
			if p.Ref != "" {
				p = doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
			}
			if p.In == "query" {
				out = append(out, p.Name)
			}
		}
		return out
	}
	r := routes{}
	for path, item := range doc.Paths {
		var shared []param
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				t.Fatalf("%s parameters: %v", path, err)
			}
		}
		r[path] = map[string][]string{}
		for method, raw := range item {
			if method == "parameters" || strings.HasPrefix(method, "x-") || method == "summary" || method == "description" {
				continue
			}
			var op struct {
				Parameters []param `json:"parameters"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			r[path][strings.ToUpper(method)] = append(queries(shared), queries(op.Parameters)...)
		}
	}
	if len(r) == 0 {
		t.Fatal("no paths in the OpenAPI document")
	}
	return r
}

// nodeURL is a URL of a node as the docs write it: localhost or
// 127.0.0.1 (with or without a scheme and port), or any http(s) URL.
var nodeURL = regexp.MustCompile(`^(?:https?://[^/\s]+|localhost(?::\d+)?|127\.0\.0\.1(?::\d+)?)(/.*)?$`)

// checkCurl checks a curl command's URL against the routes: the path, the
// method (-X, or POST when it sends data, else GET) and the query
// parameters. A URL naming a shell variable in its query is checked up to
// the variable: its parameter names are still literal.
func (r routes) checkCurl(args []string) error {
	method, rawURL := "", ""
	data := false
	takesValue := map[string]bool{"-X": true, "--request": true, "-d": true, "--data": true, "--data-binary": true,
		"--data-raw": true, "-H": true, "--header": true, "-u": true, "--user": true, "-o": true, "--output": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-X") && len(a) > 2:
			method = a[2:]
		case a == "-X" || a == "--request":
			if i+1 < len(args) {
				method = args[i+1]
			}
			i++
		case takesValue[a]:
			if strings.HasPrefix(a, "-d") || strings.HasPrefix(a, "--data") {
				data = true
			}
			i++
		case strings.HasPrefix(a, "-"):
		case nodeURL.MatchString(a):
			if rawURL != "" {
				return fmt.Errorf("two URLs: %s and %s", rawURL, a)
			}
			rawURL = a
		default:
			return fmt.Errorf("curl argument %q is neither an option this check knows nor a node's URL", a)
		}
	}
	if rawURL == "" {
		return errors.New("curl without a node's URL")
	}
	if method == "" {
		method = "GET"
		if data {
			method = "POST"
		}
	}
	if !strings.Contains(rawURL, "://") {
		rawURL = "http://" + rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	path := u.Path
	for tmpl, methods := range r {
		if !pathMatches(tmpl, path) {
			continue
		}
		query, ok := methods[method]
		if !ok {
			return fmt.Errorf("%s takes %v, not %s", tmpl, keys(methods), method)
		}
		for name := range u.Query() {
			if !slices.Contains(query, name) {
				return fmt.Errorf("%s %s takes no query parameter %q (it takes %v)", method, tmpl, name, query)
			}
		}
		return nil
	}
	return fmt.Errorf("no route of the OpenAPI document serves %s", path)
}

// pathMatches reports whether path is an instance of the template
// (/v1/topics/{topic}: one non-empty segment per {name}).
func pathMatches(tmpl, path string) bool {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if strings.HasPrefix(ts[i], "{") && strings.HasSuffix(ts[i], "}") {
			if ps[i] == "" {
				return false
			}
			continue
		}
		if ts[i] != ps[i] {
			return false
		}
	}
	return true
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
