package main

import (
	"strconv"
	"strings"
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
