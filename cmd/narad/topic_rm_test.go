package main

import (
	"strings"
	"testing"
)

// narad topic rm deletes an idle topic at once, but a topic holding
// unconsumed records or with children is deleted only when confirmed: on
// a terminal it asks, elsewhere it refuses unless --yes, as purge does.
func TestTopicRemoveConfirmsWhenItLosesSomething(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "DELETE" {
			return 204, ""
		}
		switch r.Path {
		case "/v1/topics/idle":
			return 200, `{"name":"idle","partitions":1,"partition_stats":[{"index":0,"next_offset":9,"consumer_frontier":9}]}`
		case "/v1/topics/busy":
			return 200, `{"name":"busy","partitions":2,"partition_stats":[{"index":0,"next_offset":10,"consumer_frontier":4},{"index":1,"next_offset":5,"consumer_frontier":4}]}`
		case "/v1/topics/parent":
			return 200, `{"name":"parent","partitions":1,"children":["audit","retry"],"partition_stats":[{"index":0}]}`
		}
		return 404, `{"error":"topic not found"}`
	})
	c := against(b)

	mustOK(t, c.run(t, "topic", "rm", "idle")) // nothing to lose: no question
	for _, tc := range []struct{ topic, says string }{
		{"busy", "7 unconsumed records"},
		{"parent", "children audit, retry"},
	} {
		r := c.run(t, "topic", "rm", tc.topic) // stdin not a terminal, no --yes
		if r.code != exitError || !strings.Contains(r.stderr, "--yes") || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("unconfirmed rm %s from a pipe: exit %d, stderr %q", tc.topic, r.code, r.stderr)
		}
	}
	c.stdinTTY, c.stdin = true, "n\n"
	if r := c.run(t, "topic", "rm", "busy"); r.code != exitError || !strings.Contains(r.stderr, "7 unconsumed records") ||
		!strings.Contains(r.stderr, "[y/N]") || !strings.Contains(r.stderr, "cancelled") {
		t.Errorf("declined rm: exit %d, stderr %q", r.code, r.stderr)
	}
	if got := b.only("DELETE", "/v1/topics/busy"); len(got) != 0 {
		t.Fatalf("an unconfirmed rm reached the server: %+v", got)
	}
	c.stdin = "yes\n"
	r := c.run(t, "topic", "rm", "parent")
	mustOK(t, r)
	if r.stdout != "deleted topic parent\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	c.stdinTTY, c.stdin = false, ""
	mustOK(t, c.run(t, "topic", "rm", "busy", "--yes"))
	if r := c.run(t, "topic", "rm", "gone"); r.code != exitNotFound {
		t.Errorf("rm of a missing topic: exit %d, stderr %q", r.code, r.stderr)
	}
	var deleted []string
	for _, q := range b.requests() {
		if q.Method == "DELETE" {
			deleted = append(deleted, q.Path)
		}
	}
	if strings.Join(deleted, " ") != "/v1/topics/idle /v1/topics/parent /v1/topics/busy" {
		t.Errorf("deleted %v", deleted)
	}
	if got := b.only("GET", "/v1/topics/busy"); len(got) != 2 { // the two runs without --yes
		t.Errorf("--yes still described the topic, or rm did not: %d GETs of busy", len(got))
	}
}
