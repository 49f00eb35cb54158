package main

import (
	"strings"
	"testing"
)

// completions runs cobra's completion request and returns the offered
// words (without the directive line and cobra's notes).
func completions(t *testing.T, c cli, args ...string) []string {
	t.Helper()
	r := c.run(t, append([]string{"__complete"}, args...)...)
	mustOK(t, r)
	var words []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		words = append(words, strings.SplitN(line, "\t", 2)[0])
	}
	return words
}

// TestCompletionAsksTheServer: topic, child, user and member names come
// from the server, context names from the contexts file.
func TestCompletionAsksTheServer(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		switch r.Path {
		case "/v1/topics":
			return 200, `{"topics":[{"name":"orders"},{"name":"audit"},{"name":"orders-dr"}]}`
		case "/v1/topics/orders/children":
			return 200, `{"parent":"orders","children":[{"name":"orders-dr"},{"name":"orders-audit"}]}`
		case "/v1/users":
			return 200, `{"users":[{"username":"billing"},{"username":"admin"}]}`
		case "/v1/cluster/members":
			return 200, `{"members":[{"id":"n2"},{"id":"n1"}]}`
		}
		return 404, `{"error":"no"}`
	})
	home := t.TempDir()
	writeContexts(t, home, twoContexts)
	c := against(b)
	c.home = home
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"topic", "info", ""}, "audit orders orders-dr"},
		{[]string{"sub", "ord"}, "orders orders-dr"},
		{[]string{"topic", "detach", "orders", ""}, "orders-audit orders-dr"},
		{[]string{"topic", "add", "orders-v2", "--parent", "a"}, "audit"},
		{[]string{"user", "rm", ""}, "admin billing"},
		{[]string{"cluster", "decommission", ""}, "n1 n2"},
		{[]string{"ctx", "select", ""}, "bare other pwonly sel"},
		{[]string{"topic", "ls", "--context", "o"}, "other"},
		{[]string{"topic", "info", "orders", ""}, ""},
	} {
		if got := strings.Join(completions(t, c, tc.args...), " "); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestCompletionWithoutAServerOffersNothing: no error in the shell, no
// wait for a node that is not there.
func TestCompletionWithoutAServerOffersNothing(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, "" })
	url := b.srv.URL
	b.srv.Close()
	c := cli{env: map[string]string{"NARAD_ADDR": url, "NARAD_RETRY_FOR": "1m"}}
	r := c.run(t, "__complete", "topic", "info", "")
	if r.code != 0 || strings.Contains(r.stderr, "waiting") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
	if got := completions(t, c, "topic", "info", ""); len(got) != 0 {
		t.Errorf("offered %q", got)
	}
}
