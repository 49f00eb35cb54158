package main

import (
	"strings"
	"testing"
)

func TestTopicAddSendsSettingsInMilliseconds(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 201, `{"name":"orders","partitions":6,"retention_ms":604800000,"visibility_timeout_ms":45000,"parent":"events","fanout_delay_ms":3600000}`
	})
	r := against(b).run(t, "topic", "add", "orders", "--partitions", "6", "--retention", "7d", "--visibility", "45s",
		"--max-in-flight", "10", "--max-acked-ahead", "20", "--parent", "events", "--delay", "1h")
	mustOK(t, r)
	got := b.requests()
	if len(got) != 1 || got[0].Method != "POST" || got[0].Path != "/v1/topics" {
		t.Fatalf("requests %+v", got)
	}
	want := `{"name":"orders","partitions":6,"retention_ms":604800000,"visibility_timeout_ms":45000,` +
		`"max_in_flight_per_partition":10,"max_acked_ahead_per_partition":20,"parent":"events","fanout_delay_ms":3600000}`
	if got[0].Body != want {
		t.Errorf("body\n got %s\nwant %s", got[0].Body, want)
	}
	if r.stdout != "created topic orders: 6 partitions, retention 7d, visibility 45s, parent events, delay 1h\n" {
		t.Errorf("stdout %q", r.stdout)
	}
}

// A child created with a filter sends it with the create; a filter
// without a parent is refused before anything is sent.
func TestTopicAddChildWithAFilter(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 201, `{"name":"big","partitions":3,"parent":"orders"}` })
	mustOK(t, against(b).run(t, "topic", "add", "big", "--parent", "orders", "--filter", `{"total":[{"numeric":[">",100]}]}`, "--filter-scope", "payload"))
	want := `{"name":"big","parent":"orders","fanout_filter":{"total":[{"numeric":["\u003e",100]}]},"fanout_filter_scope":"payload"}` // encoding/json escapes ">"
	if got := b.requests(); len(got) != 1 || got[0].Body != want {
		t.Fatalf("requests %+v\nwant body %s", got, want)
	}
	r := against(b).run(t, "topic", "add", "big2", "--filter", `{"a":["b"]}`)
	if r.code == 0 || !strings.Contains(r.stderr, "--filter needs --parent") || len(b.requests()) != 1 {
		t.Fatalf("filter without a parent: code %d, stderr %q, %d requests", r.code, r.stderr, len(b.requests()))
	}
}

func TestTopicAddLeavesDefaultsToTheServer(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 201, `{"name":"t","partitions":3}` })
	mustOK(t, against(b).run(t, "topic", "add", "t"))
	if body := b.requests()[0].Body; body != `{"name":"t"}` {
		t.Errorf("body %s", body)
	}
}

func TestTopicAddRejectsBadUnitsBeforeSending(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 201, `{}` })
	for _, args := range [][]string{
		{"topic", "add", "t", "--retention", "7"},
		{"topic", "add", "t", "--visibility", "-5s"},
		{"topic", "add", "t", "--retention", "100us"},
		{"topic", "add", "t", "--partitions", "-1"},
	} {
		r := against(b).run(t, args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "narad: ") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	if n := len(b.requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}

func TestTopicEditSendsOnlyGivenFlags(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, `{"name":"orders","partitions":3}` })
	mustOK(t, against(b).run(t, "topic", "edit", "orders", "--retention", "12h", "--max-in-flight", "8"))
	got := b.requests()
	if len(got) != 1 || got[0].Method != "PATCH" || got[0].Path != "/v1/topics/orders" ||
		got[0].Body != `{"retention_ms":43200000,"max_in_flight_per_partition":8}` {
		t.Fatalf("requests %+v", got)
	}

	r := against(b).run(t, "topic", "edit", "orders")
	if r.code != 1 || !strings.Contains(r.stderr, "narad: nothing to change") {
		t.Errorf("edit without flags: exit %d stderr %q", r.code, r.stderr)
	}
	if len(b.requests()) != 1 {
		t.Error("edit without flags sent a request")
	}
}

func TestTopicListFollowsPages(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.q("page_token") == "" {
			return 200, `{"topics":[{"name":"a","partitions":3,"retention_ms":86400000,"visibility_timeout_ms":30000,"children":["b"]}],"next_page_token":"p2"}`
		}
		return 200, `{"topics":[{"name":"b","partitions":1,"retention_ms":5400000,"visibility_timeout_ms":1500,"parent":"a"}],"next_page_token":""}`
	})
	r := against(b).run(t, "topic", "ls")
	mustOK(t, r)
	got := b.requests()
	if len(got) != 2 || got[0].q("limit") != "100" || got[1].q("page_token") != "p2" {
		t.Fatalf("requests %+v", got)
	}
	want := "NAME  PARTITIONS  RETENTION  VISIBILITY  PARENT  CHILDREN\n" +
		"a     3           1d         30s         -       b\n" +
		"b     1           1h30m      1.5s        a       -\n"
	if r.stdout != want {
		t.Errorf("stdout\n%s\nwant\n%s", r.stdout, want)
	}
}

func TestTopicInfo(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"name":"orders","partitions":2,"retention_ms":604800000,"visibility_timeout_ms":30000,
			"max_in_flight_per_partition":1024,"max_acked_ahead_per_partition":1024,
			"partition_stats":[{"index":0,"owner_node":"n1","segments":1,"oldest_offset":0,"next_offset":10,"high_watermark":10,"consumer_frontier":4,"size_bytes":2048},
			{"index":1,"owner_node":"n2","next_offset":5,"consumer_frontier":5,"available":false}]}`
	})
	r := against(b).run(t, "topic", "info", "orders")
	mustOK(t, r)
	if got := b.requests(); len(got) != 1 || got[0].Path != "/v1/topics/orders" {
		t.Fatalf("requests %+v", got)
	}
	for _, want := range []string{
		"retention:           7d",
		"0          n1     0       10    10              4         6        1         2.0 KiB  yes",
		"1          n2     0       5     0               5         0        0         0 B      NO",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestTopicRemoveAttachDetachChildren(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		switch {
		case r.Method == "GET" && r.Path == "/v1/topics/a%20b":
			return 200, `{"name":"a b","partitions":1}`
		case r.Method == "GET":
			return 200, `{"parent":"orders","children":[{"name":"audit","delay_ms":3600000,"attach_epoch":"67953471cc57a32a","lag_messages":5,"due_lag_seconds":0.5,"lag_complete":true,"dropped_messages":0}]}`
		case r.Method == "POST":
			return 201, `{}`
		}
		return 204, ""
	})
	c := against(b)
	mustOK(t, c.run(t, "topic", "rm", "a b"))
	mustOK(t, c.run(t, "topic", "attach", "orders", "audit", "--delay", "1h"))
	mustOK(t, c.run(t, "topic", "detach", "orders", "audit"))
	r := c.run(t, "topic", "children", "orders")
	mustOK(t, r)
	got := b.requests()
	want := []req{
		{Method: "GET", Path: "/v1/topics/a%20b"},
		{Method: "DELETE", Path: "/v1/topics/a%20b"},
		{Method: "POST", Path: "/v1/topics/orders/children", Body: `{"child":"audit","delay_ms":3600000}`},
		{Method: "DELETE", Path: "/v1/topics/orders/children/audit"},
		{Method: "GET", Path: "/v1/topics/orders/children"},
	}
	if len(got) != len(want) {
		t.Fatalf("requests %+v", got)
	}
	for i := range want {
		if got[i].Method != want[i].Method || got[i].Path != want[i].Path || got[i].Body != want[i].Body {
			t.Errorf("request %d: got %+v want %+v", i, got[i], want[i])
		}
	}
	if !strings.Contains(r.stdout, "audit  1h     -      -       5    0.5s     true      0        -") {
		t.Errorf("children output %q", r.stdout)
	}
}

func TestAPIErrorsExitWithMessage(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 409, `{"error":"topic \"orders\" already exists"}` })
	r := against(b).run(t, "topic", "add", "orders")
	if r.code != 1 || r.stderr != "narad: topic \"orders\" already exists (HTTP 409)\n" || r.stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	r := cli{}.run(t, "nosuch")
	if r.code != 1 || !strings.HasPrefix(r.stderr, `narad: unknown command "nosuch"`) {
		t.Errorf("unknown command: exit %d stderr %q", r.code, r.stderr)
	}
	r = cli{}.run(t, "topic", "add")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "narad: accepts 1 arg") {
		t.Errorf("missing arg: exit %d stderr %q", r.code, r.stderr)
	}
}
