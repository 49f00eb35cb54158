// Command mutate checks that the tests catch what they claim: it applies
// each breakage of a list (a "mutant": one exact text replacement in one
// file) to a private copy of the module, runs the tests named for it, and
// reports which mutants the tests caught. It is a tool, not part of the
// narad binary, and not part of the default test suite (each mutant costs
// a test run).
//
//	go run ./scripts/mutate [-only REGEXP] [-timeout 3m] [-v] [mutants-file ...]
//
// With no file it reads every scripts/mutate/*.txt. The working tree is
// never touched: the module is copied (tracked and untracked, not ignored
// files) into a temporary directory, and each mutant is applied and undone
// there. The exit status is 0 only when every mutant was caught.
//
// A mutant whose old text is not found exactly once, or whose mutated
// code does not build, is reported as invalid and counts against the
// score: a list that has rotted must not pass for a caught one.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

func main() {
	only := flag.String("only", "", "run only mutants whose name matches this regular expression")
	timeout := flag.Duration("timeout", 3*time.Minute, "bound on each test command of a mutant")
	verbose := flag.Bool("v", false, "print the test output of mutants that survive or are invalid")
	suite := flag.Bool("suite", false, "run the whole of each named test package (-run .) rather than the tests a mutant names: is the breakage caught anywhere? (slow)")
	dry := flag.Bool("dry", false, "only check that each mutant applies and builds (go vet of its package), running no test")
	flag.Parse()
	files := flag.Args()
	if len(files) == 0 {
		var err error
		if files, err = filepath.Glob(filepath.Join("scripts", "mutate", "*.txt")); err != nil {
			fatal(err)
		}
	}
	var ms []Mutant
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fatal(err)
		}
		got, err := Parse(string(b))
		if err != nil {
			fatal(fmt.Errorf("%s: %w", f, err))
		}
		ms = append(ms, got...)
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fatal(err)
		}
		var keep []Mutant
		for _, m := range ms {
			if re.MatchString(m.Name) {
				keep = append(keep, m)
			}
		}
		ms = keep
	}
	if len(ms) == 0 {
		fatal(errors.New("no mutants to run"))
	}
	root, err := moduleRoot()
	if err != nil {
		fatal(err)
	}
	work, err := os.MkdirTemp("", "narad-mutate-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(work)
	if err := copyModule(root, work); err != nil {
		fatal(err)
	}
	caught, invalid := 0, 0
	start := time.Now()
	for i, m := range ms {
		t0 := time.Now()
		if *suite {
			for i := range m.Tests {
				m.Tests[i].Run = "."
			}
		}
		res, out := run(work, m, *timeout, *dry)
		fmt.Printf("[%2d/%d] %-8s %-44s %5.1fs  %s\n", i+1, len(ms), res, m.Name, time.Since(t0).Seconds(), m.Rule)
		switch res {
		case caughtResult:
			caught++
		case invalidResult:
			invalid++
		}
		if *verbose && res != caughtResult {
			fmt.Println(indent(out))
		}
	}
	if *dry {
		fmt.Printf("\n%d of %d mutants apply and build\n", len(ms)-invalid, len(ms))
		if invalid > 0 {
			os.Exit(1)
		}
		return
	}
	fmt.Printf("\nmutation score: %d of %d caught (%d survived, %d invalid) in %s\n",
		caught, len(ms), len(ms)-caught-invalid, invalid, time.Since(start).Round(time.Second))
	if caught != len(ms) {
		os.Exit(1)
	}
}

const (
	caughtResult  = "caught"
	survived      = "SURVIVED"
	invalidResult = "INVALID"
)

// run applies m in the copy at work, runs its tests and undoes it.
func run(work string, m Mutant, timeout time.Duration, dry bool) (string, string) {
	path := filepath.Join(work, filepath.FromSlash(m.File))
	orig, err := os.ReadFile(path)
	if err != nil {
		return invalidResult, err.Error()
	}
	mutated, err := m.Apply(string(orig))
	if err != nil {
		return invalidResult, err.Error()
	}
	if err := os.WriteFile(path, []byte(mutated), 0o644); err != nil {
		return invalidResult, err.Error()
	}
	defer os.WriteFile(path, orig, 0o644)
	if dry {
		cmd := exec.Command("go", "vet", "./"+filepath.ToSlash(filepath.Dir(m.File)))
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			return invalidResult, string(out)
		}
		return "applies", ""
	}
	var all bytes.Buffer
	for _, tc := range m.Tests {
		ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
		args := []string{"test", "-count=1", "-timeout", timeout.String(), tc.Package, "-run", tc.Run}
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		cancel()
		fmt.Fprintf(&all, "$ go %s\n%s", strings.Join(args, " "), out)
		switch {
		case err == nil:
			if bytes.Contains(out, []byte("no tests to run")) {
				return invalidResult, all.String() + "\n(the -run pattern matched no test)"
			}
			continue // this command passed: try the next one
		case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
			return invalidResult, all.String()
		}
		return caughtResult, all.String()
	}
	return survived, all.String()
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside a Go module: run from the repository")
	}
	return filepath.Dir(mod), nil
}

// copyModule copies the files git knows of (tracked, and untracked but not
// ignored, so uncommitted work is what is tested) from root to dst.
func copyModule(root, dst string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("listing the module's files with git: %w", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		if err := copyFile(filepath.Join(root, rel), filepath.Join(dst, rel)); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil // deleted in the work tree, not yet in the index
	}
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil || fi.IsDir() {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 60 {
		lines = append(lines[:20], append([]string{"    ..."}, lines[len(lines)-40:]...)...)
	}
	return "    " + strings.Join(lines, "\n    ")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(2)
}
