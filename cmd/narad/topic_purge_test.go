package main

import (
	"strings"
	"testing"
)

// narad topic purge asks on a terminal, refuses unasked elsewhere, and
// --yes skips the question; only a confirmed purge reaches the server.
func TestTopicPurgeConfirms(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Path == "/v1/topics/theirs/purge" {
			return 403, `{"error":"only the owner of topic \"theirs\" or an admin of it may change it"}`
		}
		return 200, `{"purged":7}`
	})
	c := against(b)

	r := c.run(t, "topic", "purge", "jobs") // stdin not a terminal, no --yes
	if r.code == 0 || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("unconfirmed purge from a pipe: exit %d, stderr %q", r.code, r.stderr)
	}
	c.stdinTTY, c.stdin = true, "n\n"
	if r := c.run(t, "topic", "purge", "jobs"); r.code == 0 || !strings.Contains(r.stderr, "[y/N]") || !strings.Contains(r.stderr, "cancelled") {
		t.Fatalf("declined purge: exit %d, stderr %q", r.code, r.stderr)
	}
	if got := b.requests(); len(got) != 0 {
		t.Fatalf("an unconfirmed purge reached the server: %+v", got)
	}
	c.stdin = "y\n"
	r = c.run(t, "topic", "purge", "jobs")
	mustOK(t, r)
	if r.stdout != "purged 7 records from topic jobs\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
	c.stdinTTY, c.stdin = false, ""
	mustOK(t, c.run(t, "topic", "purge", "a b", "--yes"))
	if r := c.run(t, "topic", "purge", "theirs", "-y"); r.code != exitAuth {
		t.Fatalf("refused purge: exit %d, stderr %q", r.code, r.stderr)
	}
	got := b.requests()
	if len(got) != 3 || got[0].Method != "POST" || got[0].Path != "/v1/topics/jobs/purge" || got[1].Path != "/v1/topics/a%20b/purge" {
		t.Fatalf("requests %+v", got)
	}
}
