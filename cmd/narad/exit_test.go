package main

import (
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestExitCodes: scripts tell "not found" and "not allowed" from other
// failures by the exit code alone; help lists the codes.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   int
	}{
		{404, exitNotFound},
		{401, exitAuth},
		{403, exitAuth},
		{400, exitError},
		{409, exitError},
		{500, exitError},
	} {
		b := newBroker(t, func(r req) (int, string) { return tc.status, `{"error":"no"}` })
		if r := against(b).run(t, "topic", "info", "orders"); r.code != tc.want || r.stderr != "narad: no (HTTP "+strconv.Itoa(tc.status)+")\n" {
			t.Errorf("HTTP %d: exit %d stderr %q, want exit %d", tc.status, r.code, r.stderr, tc.want)
		}
	}
	if r := (cli{home: t.TempDir()}).run(t, "ctx", "select", "nope"); r.code != exitNotFound {
		t.Errorf("missing context: exit %d stderr %q", r.code, r.stderr)
	}
	if r := (cli{}).run(t, "topic", "add"); r.code != exitError {
		t.Errorf("usage error: exit %d", r.code)
	}
	help := cli{}.run(t, "--help").stdout
	for _, want := range []string{"Exit codes:", "3    not found", "4    authentication failed", "130  interrupted"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
}

// interruptAt answers with handle and, at the n-th request, sends this
// process a SIGINT, as Ctrl-C in a terminal does: the command under test
// has its handler installed by then (it is sending requests), so the
// signal stops the command, not the test binary.
func interruptAt(t *testing.T, n int, handle func(r req) (int, string)) func(r req) (int, string) {
	var mu sync.Mutex
	seen := 0
	return func(r req) (int, string) {
		mu.Lock()
		seen++
		if seen == n {
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
				t.Error(err)
			}
		}
		mu.Unlock()
		return handle(r)
	}
}

// TestLongRunningCommandsExit130OnCtrlC: sub, replay and pub --count,
// each of which would go on without end here, stop at Ctrl-C with exit
// 130 and print no error; what they printed before stays printed.
func TestLongRunningCommandsExit130OnCtrlC(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		handle func(r req) (int, string)
	}{
		{"sub", []string{"sub", "orders"}, func(r req) (int, string) { return 204, "" }},
		{"replay", []string{"replay", "orders", "--partition", "1", "--max", "1"}, partitionLog(0, 1<<40)},
		{"pub --count", []string{"pub", "orders", "m{i}", "--count", "1000000000"}, accept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBroker(t, interruptAt(t, 3, tc.handle))
			r := against(b).run(t, tc.args...)
			if r.code != 130 || r.stderr != "" {
				t.Errorf("exit %d stderr %q, want 130 and nothing said", r.code, r.stderr)
			}
			if tc.name == "replay" && !strings.HasPrefix(r.stdout, "# p1@0") {
				t.Errorf("replay printed %q before the interrupt", r.stdout)
			}
		})
	}
}
