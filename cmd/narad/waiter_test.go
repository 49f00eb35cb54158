package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestCommandWaitsOutA503: a node answering 503 with Retry-After (it is
// starting, or failing over) is waited for; the command says so once on
// stderr and then succeeds.
func TestCommandWaitsOutA503(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"topics":[{"name":"orders","partitions":1}]}`
	})
	unavailable := 2
	b.handle = func(r req) (int, string) {
		if unavailable > 0 {
			unavailable--
			return 503, `{"error":"node is starting"}`
		}
		return 200, `{"topics":[{"name":"orders","partitions":1}]}`
	}
	b.header = func(_ req, status int) http.Header {
		if status == 503 {
			return http.Header{"Retry-After": {"0"}}
		}
		return nil
	}
	r := against(b).retrying("10s").run(t, "topic", "ls")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "orders") {
		t.Errorf("stdout %q", r.stdout)
	}
	want := "narad: waiting for the node at " + b.srv.URL + " (unavailable: node is starting); retrying for up to 10s\n"
	if r.stderr != want {
		t.Errorf("stderr\n got %q\nwant %q", r.stderr, want)
	}
	if n := len(b.requests()); n != 3 {
		t.Errorf("%d requests, want 3 (two 503s, then the answer)", n)
	}
}

// TestCommandWaitsForARefusingNode: connection refused is "starting"; the
// wait is bounded by --retry-for and the final error says it waited.
func TestCommandWaitsForARefusingNode(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, "" })
	url := b.srv.URL
	b.srv.Close()
	r := cli{env: map[string]string{"NARAD_ADDR": url}}.run(t, "topic", "ls", "--retry-for", "200ms")
	if r.code != exitError {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if len(lines) < 2 || lines[0] != "narad: waiting for the node at "+url+" (starting: connection refused); retrying for up to 200ms" {
		t.Fatalf("stderr %q", r.stderr)
	}
	if strings.Count(r.stderr, "waiting for the node") != 1 || !strings.Contains(r.stderr, "cannot reach a broker at "+url) ||
		!strings.Contains(r.stderr, "--retry-for to wait longer") {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestRetryForIsChecked: a malformed budget is refused by its name.
func TestRetryForIsChecked(t *testing.T) {
	r := cli{env: map[string]string{"NARAD_RETRY_FOR": "soon"}}.run(t, "topic", "ls")
	if r.code != exitError || !strings.HasPrefix(r.stderr, `narad: NARAD_RETRY_FOR "soon": `) {
		t.Errorf("env: exit %d stderr %q", r.code, r.stderr)
	}
	r = cli{}.run(t, "topic", "ls", "--retry-for", "soon")
	if r.code != exitError || !strings.Contains(r.stderr, `"--retry-for"`) {
		t.Errorf("flag: exit %d stderr %q", r.code, r.stderr)
	}
}
