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

// TestAttachWithEnvelope: attach --sns-envelope sends the envelope and
// says so; create --sns-envelope needs --parent.
func TestAttachWithEnvelope(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"name":"news","role":"parent","child":"news-q","delay_ms":0,"attach_epoch":"e1","envelope":{"format":"sns","topic_arn":"arn:aws:sns:us-east-1:0:news"}}`
	})
	r := against(b).run(t, "topic", "attach", "news", "news-q", "--sns-envelope", "arn:aws:sns:us-east-1:0:news")
	mustOK(t, r)
	if r.stdout != "attached news-q to news, wrapped as sns notifications of arn:aws:sns:us-east-1:0:news (epoch e1)\n" {
		t.Errorf("attach stdout %q", r.stdout)
	}
	got := b.requests()
	if len(got) != 1 || got[0].Body != `{"child":"news-q","envelope":{"format":"sns","topic_arn":"arn:aws:sns:us-east-1:0:news"}}` {
		t.Fatalf("requests %+v", got)
	}
	r = against(b).run(t, "topic", "add", "news-q2", "--sns-envelope", "arn:x")
	if r.code == 0 || !strings.Contains(r.stderr, "--sns-envelope needs --parent") {
		t.Fatalf("create --sns-envelope without --parent: %+v", r)
	}
	if len(b.requests()) != 1 {
		t.Fatal("a refused create was sent")
	}
}

// TestTopicFilter: attach --filter sends the policy and scope; "topic
// filter" changes or removes a link's filter; bad flags send nothing; the
// wide listing shows the filter and what it stepped over.
func TestTopicFilter(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		switch {
		case r.Method == "POST":
			return 200, `{"name":"orders","role":"parent","child":"orders-eu","delay_ms":0,"attach_epoch":"e1","filter":{"region":[{"prefix":"eu-"}]},"filter_scope":"payload"}`
		case r.Method == "PATCH" && strings.Contains(r.Body, "null"):
			return 200, `{"name":"orders-eu","delay_ms":0,"attach_epoch":"e1","lag_messages":0,"lag_complete":true,"dropped_messages":0,"filtered":3}`
		case r.Method == "PATCH":
			return 200, `{"name":"orders-eu","delay_ms":0,"attach_epoch":"e1","lag_messages":0,"lag_complete":true,"dropped_messages":0,"filter":{"k":["v"]},"filter_scope":"headers","filtered":3}`
		}
		return 200, `{"parent":"orders","children":[{"name":"orders-eu","delay_ms":0,"attach_epoch":"e1","lag_messages":0,"lag_complete":true,` +
			`"dropped_messages":0,"filter":{"k":["v"]},"filter_scope":"payload","filtered":3}]}`
	})
	r := against(b).run(t, "topic", "attach", "orders", "orders-eu", "--filter", `{"region": [{"prefix": "eu-"}]}`, "--filter-scope", "payload")
	mustOK(t, r)
	if r.stdout != `attached orders-eu to orders, filtered by {"region":[{"prefix":"eu-"}]} (payload) (epoch e1)`+"\n" {
		t.Errorf("attach stdout %q", r.stdout)
	}
	r = against(b).run(t, "topic", "filter", "orders", "orders-eu", "--filter", `{"k":["v"]}`)
	mustOK(t, r)
	if r.stdout != `filter of orders-eu under orders: {"k":["v"]} (headers)`+"\n" {
		t.Errorf("filter stdout %q", r.stdout)
	}
	r = against(b).run(t, "topic", "filter", "orders", "orders-eu", "--remove")
	mustOK(t, r)
	if r.stdout != "removed the filter of orders-eu under orders\n" {
		t.Errorf("remove stdout %q", r.stdout)
	}
	got := b.requests()
	want := []struct{ method, path, body string }{
		{"POST", "/v1/topics/orders/children", `{"child":"orders-eu","filter":{"region":[{"prefix":"eu-"}]},"filter_scope":"payload"}`},
		{"PATCH", "/v1/topics/orders/children/orders-eu", `{"filter":{"k":["v"]}}`},
		{"PATCH", "/v1/topics/orders/children/orders-eu", `{"filter":null}`},
	}
	if len(got) != len(want) {
		t.Fatalf("requests %+v", got)
	}
	for i, w := range want {
		if got[i].Method != w.method || got[i].Path != w.path || got[i].Body != w.body {
			t.Errorf("request %d: %s %s %s, want %s %s %s", i, got[i].Method, got[i].Path, got[i].Body, w.method, w.path, w.body)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"attach", "orders", "orders-eu", "--filter", "{nope"}, "narad: --filter {nope: is not JSON"},
		{[]string{"attach", "orders", "orders-eu", "--filter-scope", "payload"}, "narad: --filter-scope needs --filter"},
		{[]string{"attach", "orders", "orders-eu", "--filter", "{}", "--filter-scope", "body"}, "narad: --filter-scope body: must be headers or payload"},
		{[]string{"filter", "orders", "orders-eu"}, "narad: give --filter JSON to set the link's filter, or --remove"},
		{[]string{"filter", "orders", "orders-eu", "--filter", "{}", "--remove"}, "narad: give --filter JSON"},
	} {
		r := against(b).run(t, append([]string{"topic"}, tc.args...)...)
		if r.code != exitError || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("%v: exit %d stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if n := len(b.requests()); n != len(want) {
		t.Errorf("%d requests sent for refused flags", n-len(want))
	}

	r = against(b).run(t, "topic", "children", "orders", "-o", "wide")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "FILTER") || !strings.Contains(r.stdout, `payload {"k":["v"]}  3`) {
		t.Errorf("wide:\n%s", r.stdout)
	}
}
