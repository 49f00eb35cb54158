package main

import (
	"strings"
	"testing"
)

func TestTopicAddAndEditOrdering(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "POST" {
			return 201, `{"name":"payments","partitions":3,"retention_ms":0,"visibility_timeout_ms":30000,"ordering":"group"}`
		}
		return 200, `{"name":"payments","partitions":3,"retention_ms":0,"visibility_timeout_ms":30000,"ordering":"none"}`
	})
	r := against(b).run(t, "topic", "add", "payments", "--ordering", "group")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "ordered by key") {
		t.Errorf("stdout %q", r.stdout)
	}
	mustOK(t, against(b).run(t, "topic", "edit", "payments", "--ordering", "none"))
	got := b.requests()
	if len(got) != 2 || got[0].Body != `{"name":"payments","ordering":"group"}` || got[1].Body != `{"ordering":"none"}` {
		t.Fatalf("requests %+v", got)
	}
}

func TestTopicOrderingCheckedBeforeSending(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 201, `{}` })
	for _, args := range [][]string{
		{"topic", "add", "t", "--ordering", "fifo"},
		{"topic", "edit", "t", "--ordering", ""},
	} {
		r := against(b).run(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "--ordering") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	if n := len(b.requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}
