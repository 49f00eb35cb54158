package main

import (
	"strings"
	"testing"
)

// --tag sends the topic's tags at create and, on edit, replaces them;
// --clear-tags sends {}; malformed tags are refused before anything is
// sent.
func TestTopicTags(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "POST" {
			return 201, `{"name":"inv","partitions":3,"tags":{"env":"prod","team":"billing"}}`
		}
		return 200, `{"name":"inv","partitions":3}`
	})
	mustOK(t, against(b).run(t, "topic", "add", "inv", "--tag", "team=billing", "--tag", "env=prod"))
	mustOK(t, against(b).run(t, "topic", "edit", "inv", "--tag", "note=a=b,c", "--tag", "empty="))
	mustOK(t, against(b).run(t, "topic", "edit", "inv", "--clear-tags"))
	got := b.requests()
	want := []string{
		`{"name":"inv","tags":{"env":"prod","team":"billing"}}`,
		`{"tags":{"empty":"","note":"a=b,c"}}`,
		`{"tags":{}}`,
	}
	if len(got) != len(want) {
		t.Fatalf("requests %+v", got)
	}
	for i, w := range want {
		if got[i].Body != w {
			t.Errorf("request %d: body %s, want %s", i, got[i].Body, w)
		}
	}

	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"topic", "add", "x", "--tag", "novalue"}, "--tag novalue: must be KEY=VALUE"},
		{[]string{"topic", "add", "x", "--tag", "=v"}, "--tag =v: must be KEY=VALUE"},
		{[]string{"topic", "edit", "x", "--tag", "a=1", "--tag", "a=2"}, "the key a is given twice"},
		{[]string{"topic", "edit", "x", "--tag", "a=1", "--clear-tags"}, "contradict"},
	} {
		r := against(b).run(t, c.args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%v: exit %d stderr %q, want %q", c.args, r.code, r.stderr, c.says)
		}
	}
	if n := len(b.requests()); n != len(want) {
		t.Errorf("%d requests sent for invalid tags", n-len(want))
	}
}

// topic info shows the tags, the protocol attributes' keys and when the
// topic last changed.
func TestTopicInfoShowsTagsAndModified(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"name":"inv","partitions":1,"created_at":1796323045,"modified_at":1796326645,` +
			`"tags":{"team":"billing","env":"prod"},"aws_attributes":{"Policy":"{}","DisplayName":"Inv"},"partition_stats":[]}`
	})
	r := against(b).run(t, "topic", "info", "inv")
	mustOK(t, r)
	for _, want := range []string{"tags:", "env=prod, team=billing", "aws attributes:", "DisplayName, Policy", "modified:", "2026-12-03T19:37:25Z"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("topic info lacks %q:\n%s", want, r.stdout)
		}
	}
}
