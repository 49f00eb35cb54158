package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// line is one expression as scripts/promcheck reports it.
type line struct {
	Where     string     `json:"where"`
	Expr      string     `json:"expr"`
	Selectors []selector `json:"selectors"`
}

type selector struct {
	Name   string   `json:"name"`
	Labels []string `json:"labels"`
}

// root is the repository's top directory.
func root(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  []byte
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// promcheck builds scripts/promcheck once per test binary. It is a module
// of its own: the first build on a fresh machine downloads Prometheus's
// parser through the module proxy (go.sum is committed, and -mod=readonly
// refuses a go.sum that does not cover it); later builds come from the
// build cache.
func promcheck(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "promcheck")
		if err != nil {
			buildErr = []byte(err.Error())
			return
		}
		buildDir = dir
		bin := filepath.Join(dir, "promcheck")
		cmd := exec.Command("go", "build", "-mod=readonly", "-o", bin, ".")
		cmd.Dir = filepath.Join(root(t), "scripts", "promcheck")
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = append(out, []byte(err.Error())...)
			return
		}
		binPath = bin
	})
	if binPath == "" {
		t.Fatalf("building scripts/promcheck (it needs the Go module proxy the first time): %s", buildErr)
	}
	return binPath
}

// check runs promcheck on a rules file and a dashboard (either may be
// empty) and returns its lines, or its complaints and a non-nil error.
func check(t *testing.T, rules, dashboard string) ([]line, string, error) {
	t.Helper()
	var args []string
	if rules != "" {
		args = append(args, "-rules", rules)
	}
	if dashboard != "" {
		args = append(args, "-dashboard", dashboard)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(promcheck(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, stderr.String(), err
	}
	var lines []line
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("promcheck printed %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines, stderr.String(), nil
}
