package main

import (
	"strings"
	"testing"
)

// TestTopicAttachRemote: --remote-url and --remote-topic make a link to a
// topic of another cluster; the password comes from standard input; the
// answer's warnings reach stderr.
func TestTopicAttachRemote(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 201, `{"name":"orders","role":"parent","children":["orders-dr"],"child":"orders-dr","delay_ms":0,"attach_epoch":"e1",` +
			`"remote":{"url":"http://dr.example:7942","topic":"orders"},"state":"running",` +
			`"warnings":["credentials are sent to http://dr.example:7942 in plaintext"]}`
	})
	c := against(b)
	c.stdin = "replica-pw\n"
	r := c.run(t, "topic", "attach", "orders", "orders-dr", "--remote-url", "http://dr.example:7942", "--remote-topic", "orders",
		"--remote-user", "replicator", "--remote-password-stdin", "--start", "oldest")
	mustOK(t, r)
	got := b.requests()
	if len(got) != 1 || got[0].Path != "/v1/topics/orders/children" || got[0].Body !=
		`{"child":"orders-dr","remote":{"url":"http://dr.example:7942","topic":"orders","username":"replicator","password":"replica-pw"},"start":"oldest"}` {
		t.Fatalf("requests %+v", got)
	}
	if r.stdout != "attached orders-dr to orders: records go to topic orders at http://dr.example:7942, from oldest (epoch e1)\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if r.stderr != "narad: warning: credentials are sent to http://dr.example:7942 in plaintext\n" {
		t.Errorf("stderr %q", r.stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--remote-url", "https://dr.example:7942"}, "narad: --remote-topic is required with --remote-url"},
		{[]string{"--remote-topic", "orders"}, "narad: --remote-topic needs --remote-url"},
		{[]string{"--remote-url", "dr.example:7942", "--remote-topic", "o"}, `narad: --remote-url "dr.example:7942" is not a URL`},
		{[]string{"--remote-url", "https://dr.example", "--remote-topic", "o", "--delay", "1h"}, "narad: --delay and --remote-url contradict"},
		{[]string{"--remote-url", "https://dr.example", "--remote-topic", "o", "--remote-user", "u"}, "narad: --remote-user u needs a password"},
		{[]string{"--remote-url", "https://dr.example", "--remote-topic", "o", "--start", "now"}, "narad: --start now: must be attach, frontier or oldest"},
	} {
		r := against(b).run(t, append([]string{"topic", "attach", "orders", "orders-dr"}, tc.args...)...)
		if r.code != exitError || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("%v: exit %d stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if n := len(b.requests()); n != 1 {
		t.Errorf("%d requests sent for refused flags", n-1)
	}
}

// TestChildrenTableShowsRemoteLinks: a remote link's state, target and
// the reason for its state are columns; wide adds its recovery point.
func TestChildrenTableShowsRemoteLinks(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"parent":"orders","children":[` +
			`{"name":"orders-audit","delay_ms":0,"attach_epoch":"a1","lag_messages":0,"lag_complete":true,"dropped_messages":0},` +
			`{"name":"orders-dr","delay_ms":0,"attach_epoch":"e1","lag_messages":12,"lag_complete":true,"dropped_messages":0,` +
			`"remote":{"url":"https://dr.example:7942","topic":"orders"},"state":"auth_failed","state_reason":"401 from the target:\n bad password",` +
			`"recovery_point":[{"partition":0,"next_offset":98,"committed_at_ms":1796004226123}]}]}`
	})
	r := against(b).run(t, "topic", "children", "orders")
	mustOK(t, r)
	want := "CHILD         DELAY  STATE        TARGET                             LAG  DUE LAG  COMPLETE  DROPPED  REASON\n" +
		"orders-audit  -      -            -                                  0    -        true      0        -\n" +
		"orders-dr     -      auth_failed  orders at https://dr.example:7942  12   -        true      0        401 from the target: bad password\n"
	if r.stdout != want {
		t.Errorf("table\n%s\nwant\n%s", r.stdout, want)
	}
	r = against(b).run(t, "topic", "children", "orders", "-o", "wide")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "RECOVERY POINT") || !strings.Contains(r.stdout, "2026-11-30T") {
		t.Errorf("wide:\n%s", r.stdout)
	}
}
