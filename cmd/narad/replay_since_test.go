package main

import (
	"fmt"
	"strings"
	"testing"
)

// sinceLog answers GET /v1/topics/orders/replay from a merged list of
// records "p:o" (already in commit-time order), max a page; the token is
// the index of the next record, and the last page is caught up.
func sinceLog(records ...string) func(r req) (int, string) {
	return func(r req) (int, string) {
		if r.Path != "/v1/topics/orders/replay" {
			return 404, `{"error":"no such route"}`
		}
		from := 0
		fmt.Sscanf(r.q("page_token"), "t%d", &from)
		max := 100
		fmt.Sscanf(r.q("max"), "%d", &max)
		var msgs []string
		i := from
		for ; i < len(records) && len(msgs) < max; i++ {
			var p, o int
			fmt.Sscanf(records[i], "%d:%d", &p, &o)
			msgs = append(msgs, fmt.Sprintf(`{"topic":"orders","partition":%d,"offset":%d,"payload":"m%d.%d","payload_encoding":"text","timestamp":1796320800,"timestamp_ms":%d}`,
				p, o, p, o, 1796320800000+int64(i)))
		}
		return 200, fmt.Sprintf(`{"messages":[%s],"next_page_token":"t%d","caught_up":%v}`, strings.Join(msgs, ","), i, i == len(records))
	}
}

func replayQueries(b *broker) []string {
	var out []string
	for _, r := range b.only("GET", "/v1/topics/orders/replay") {
		out = append(out, r.Query.Encode())
	}
	return out
}

// Without --partition, replay --since reads every partition merged, page
// after page by next_page_token, until a page is caught up.
func TestReplaySinceFollowsPages(t *testing.T) {
	b := newBroker(t, sinceLog("2:0", "0:0", "1:0", "0:1", "2:1"))
	r := against(b).run(t, "replay", "orders", "--since", "10m", "--max", "2", "--raw")
	mustOK(t, r)
	if r.stdout != "m2.0\nm0.0\nm1.0\nm0.1\nm2.1\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	want := []string{"max=2&since=10m", "max=2&page_token=t2&since=10m", "max=2&page_token=t4&since=10m"}
	if got := replayQueries(b); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("queries %q, want %q", got, want)
	}
	if len(b.requests()) != 3 {
		t.Errorf("extra requests: %+v", b.requests())
	}
}

// --count stops after that many records and asks for no more; --partition
// pins the replay; -o json prints the API's objects, one a line.
func TestReplaySinceCountPartitionJSON(t *testing.T) {
	b := newBroker(t, sinceLog("1:4", "1:5", "1:6"))
	r := against(b).run(t, "replay", "orders", "--since", "2026-12-03T18:00:00Z", "--partition", "1", "--count", "2", "-o", "json")
	mustOK(t, r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"offset":4`) || !strings.Contains(lines[1], `"timestamp_ms":1796320800001`) {
		t.Errorf("stdout %q", r.stdout)
	}
	if got := replayQueries(b); len(got) != 1 || got[0] != "max=2&partition=1&since=2026-12-03T18%3A00%3A00Z" {
		t.Errorf("queries %q", got)
	}
}

func TestReplaySinceArgumentErrors(t *testing.T) {
	b := newBroker(t, sinceLog())
	c := against(b)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "orders", "--since", "10m", "--from", "3"}, "[from since] were all set"},
		{[]string{"replay", "orders", "--since", "10m", "--to", "3"}, "[since to] were all set"},
		{[]string{"replay", "orders", "--since", ""}, "--since : want a time"},
		{[]string{"replay", "orders", "--since", "10m", "--count", "-1"}, "--count -1: must not be negative"},
		{[]string{"replay", "orders", "--since", "10m", "--max", "1001"}, "--max 1001: must be 1..1000"},
		{[]string{"replay", "orders", "--partition", "0", "--count", "2"}, "--count 2: needs --since"},
	} {
		r := c.run(t, tt.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	if n := len(b.requests()); n != 0 {
		t.Errorf("%d requests for refused arguments", n)
	}
	// The server's refusal is the command's.
	b = newBroker(t, func(req) (int, string) {
		return 400, `{"error":"query parameter since=\"soon\": want an RFC 3339 time"}`
	})
	if r := against(b).run(t, "replay", "orders", "--since", "soon"); r.code != 1 || !strings.Contains(r.stderr, "since=") {
		t.Errorf("server refusal: exit %d stderr %q", r.code, r.stderr)
	}
}
