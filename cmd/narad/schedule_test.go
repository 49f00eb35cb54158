package main

import (
	"strings"
	"testing"
)

// pub --delay and --at schedule the message (docs/concepts.md,
// "Scheduled delivery"): sent as the API's headers, --delay 0 included
// (it beats a topic's delivery delay), neither typed: neither header.
func TestPubSchedules(t *testing.T) {
	b := newBroker(t, accept)
	c := against(b)
	for _, tc := range []struct {
		args           []string
		delay, deliver string // "": the header is absent
	}{
		{[]string{"--delay", "10m"}, "10m0s", ""},
		{[]string{"--delay", "0"}, "0s", ""},
		{[]string{"--at", "2026-12-24T18:00:00Z"}, "", "1798135200000"},
		{[]string{"--at", " 1798135200000 "}, "", "1798135200000"},
		{nil, "", ""},
	} {
		mustOK(t, c.run(t, append([]string{"pub", "orders", "x"}, tc.args...)...))
		got := b.requests()
		h := got[len(got)-1].Header
		for name, want := range map[string]string{"Narad-Delay": tc.delay, "Narad-Deliver-At": tc.deliver} {
			v, sent := h[name]
			if (want == "") == sent || (sent && (len(v) != 1 || v[0] != want)) {
				t.Errorf("pub %v: %s %q (sent %v), want %q", tc.args, name, v, sent, want)
			}
		}
	}
}

// A schedule the broker would refuse is refused by its flag before
// anything is sent.
func TestPubScheduleFlagErrors(t *testing.T) {
	b := newBroker(t, accept)
	c := against(b)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--delay", "1m", "--at", "0"}, "narad: --delay and --at both schedule the message: give one\n"},
		{[]string{"--delay", "366d"}, "narad: --delay 366d: must be at most 365d\n"},
		{[]string{"--at", "tomorrow"}, "narad: --at tomorrow: want an RFC 3339 time (2026-12-24T18:00:00Z) or Unix milliseconds\n"},
		{[]string{"--at", "2026-12-24T18:00:00"}, "narad: --at 2026-12-24T18:00:00: want an RFC 3339 time (2026-12-24T18:00:00Z) or Unix milliseconds\n"},
		{[]string{"--at", "-5"}, "narad: --at -5: want an RFC 3339 time (2026-12-24T18:00:00Z) or Unix milliseconds\n"},
		{[]string{"--at", ""}, "narad: --at \"\": want an RFC 3339 time (2026-12-24T18:00:00Z) or Unix milliseconds\n"},
	} {
		r := c.run(t, append([]string{"pub", "orders", "x"}, tc.args...)...)
		if r.code == 0 || r.stderr != tc.want {
			t.Errorf("pub %v: exit %d stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if r := c.run(t, "pub", "orders", "x", "--delay", "-1s"); r.code == 0 || !strings.Contains(r.stderr, "--delay") {
		t.Errorf("a negative delay: exit %d stderr %q", r.code, r.stderr)
	}
	if n := len(b.requests()); n != 0 {
		t.Errorf("%d requests sent for refused flags", n)
	}
}

// topic add and edit send --delivery-delay in milliseconds (edit sends 0
// to turn it off), the summary and "topic info" show it, and info's
// partition table gains a SCHEDULED column where scheduling is in use.
func TestTopicDeliveryDelay(t *testing.T) {
	topic := `{"name":"rem","partitions":2,"retention_ms":0,"visibility_timeout_ms":30000,"delivery_delay_ms":900000`
	stats := `,"partition_stats":[{"index":0,"owner_node":"n1","next_offset":9,"consumer_frontier":2,"scheduled":5},{"index":1,"owner_node":"n1"}]}`
	b := newBroker(t, func(r req) (int, string) {
		switch r.Method {
		case "POST":
			return 201, topic + "}"
		case "PATCH":
			return 200, topic + "}"
		}
		return 200, topic + stats
	})
	c := against(b)
	r := c.run(t, "topic", "add", "rem", "--delivery-delay", "15m")
	mustOK(t, r)
	if body := b.requests()[0].Body; body != `{"name":"rem","delivery_delay_ms":900000}` {
		t.Errorf("add body %s", body)
	}
	if !strings.HasSuffix(r.stdout, ", delivery delay 15m\n") {
		t.Errorf("add: %q", r.stdout)
	}
	mustOK(t, c.run(t, "topic", "edit", "rem", "--delivery-delay", "0"))
	if got := b.only("PATCH", "/v1/topics/rem"); len(got) != 1 || got[0].Body != `{"delivery_delay_ms":0}` {
		t.Errorf("edit: %+v", got)
	}
	r = c.run(t, "topic", "info", "rem")
	mustOK(t, r)
	for _, want := range []string{
		"delivery delay:      15m\n",
		"BACKLOG  SCHEDULED  SEGMENTS",
		"\n0          n1     0       9     0               2         7        5          0",
		"\n1          n1     0       0     0               0         0        0          0",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("info lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := c.run(t, "topic", "edit", "rem", "--delivery-delay", "400d"); r.stderr != "narad: --delivery-delay 400d: must be at most 365d\n" {
		t.Errorf("400d: %q", r.stderr)
	}
	if r := c.run(t, "topic", "info", "rem", "-o", "json"); !strings.Contains(r.stdout, `"scheduled": 5`) {
		t.Errorf("-o json:\n%s", r.stdout)
	}
}

// A topic that schedules nothing keeps the table it had: no SCHEDULED.
func TestTopicInfoWithoutSchedulingHasNoScheduledColumn(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"name":"o","partitions":1,"partition_stats":[{"index":0,"owner_node":"n1"}]}`
	})
	r := against(b).run(t, "topic", "info", "o")
	mustOK(t, r)
	if strings.Contains(r.stdout, "SCHEDULED") || strings.Contains(r.stdout, "delivery delay") {
		t.Errorf("info:\n%s", r.stdout)
	}
}

// A scheduled record printed by replay (as by peek and sub) shows its due
// time; -o json prints the API's object, deliver_at and all.
func TestMessagesShowTheirDueTime(t *testing.T) {
	msgs := `{"messages":[{"partition":1,"offset":5,"payload":"a","payload_encoding":"text","timestamp_ms":1798134900000,"deliver_at":1798135200000,"headers":{"narad-deliver-at":"1798135200000"}},` +
		`{"partition":1,"offset":6,"payload":"b","payload_encoding":"text","timestamp_ms":1798134900000}]}`
	b := newBroker(t, func(r req) (int, string) { return 200, msgs })
	c := against(b)
	r := c.run(t, "replay", "orders", "--partition", "1", "--from", "5", "--to", "6")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "# p1@5 2026-12-24T17:55:00Z due=2026-12-24T18:00:00Z\n") ||
		!strings.Contains(r.stdout, "# p1@6 2026-12-24T17:55:00Z\n") {
		t.Errorf("replay:\n%s", r.stdout)
	}
	r = c.run(t, "replay", "orders", "--partition", "1", "--from", "5", "--to", "6", "-o", "json")
	mustOK(t, r)
	if !strings.Contains(r.stdout, `"deliver_at":1798135200000`) {
		t.Errorf("replay -o json:\n%s", r.stdout)
	}
}
