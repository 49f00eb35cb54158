package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// partitionLog serves offsets [oldest, end) of partition 1 by offset.
func partitionLog(oldest, end uint64) func(r req) (int, string) {
	return func(r req) (int, string) {
		if r.Path == "/v1/topics/orders" {
			return 200, fmt.Sprintf(`{"name":"orders","partition_stats":[{"index":0},{"index":1,"oldest_offset":%d,"next_offset":%d}]}`, oldest, end)
		}
		off, _ := strconv.ParseUint(r.q("offset"), 10, 64)
		max, _ := strconv.Atoi(r.q("max"))
		var msgs []string
		for o := max64(off, oldest); o < end && len(msgs) < max; o++ {
			msgs = append(msgs, fmt.Sprintf(`{"partition":1,"offset":%d,"payload":"m%d","payload_encoding":"text"}`, o, o))
		}
		if len(msgs) == 0 {
			return 204, ""
		}
		return 200, `{"messages":[` + strings.Join(msgs, ",") + `]}`
	}
}

func max64(a, b uint64) uint64 { return max(a, b) }

func consumeQueries(b *broker) []string {
	var out []string
	for _, r := range b.only("GET", "/v1/topics/orders/consume") {
		out = append(out, r.Query.Encode())
	}
	return out
}

func TestReplayRange(t *testing.T) {
	b := newBroker(t, partitionLog(0, 100))
	r := against(b).run(t, "replay", "orders", "--partition", "1", "--from", "5", "--to", "9", "--max", "2", "--raw")
	mustOK(t, r)
	want := []string{
		"max=2&offset=5&partition=1",
		"max=2&offset=7&partition=1",
		"max=1&offset=9&partition=1",
	}
	if got := consumeQueries(b); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("queries %q, want %q", got, want)
	}
	if len(b.requests()) != 3 {
		t.Errorf("replay with --from made extra requests: %+v", b.requests())
	}
	if r.stdout != "m5\nm6\nm7\nm8\nm9\n" {
		t.Errorf("stdout %q", r.stdout)
	}
}

// replay --raw prints each payload's bytes as they were produced: JSON
// with its own whitespace, the JSON string "hello" with its quotes, the
// text hello without (issue 11).
func TestReplayRawPrintsPayloadsVerbatim(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Path == "/v1/topics/orders" {
			return 200, `{"name":"orders","partition_stats":[{"index":0,"oldest_offset":0,"next_offset":3}]}`
		}
		if r.q("offset") != "0" {
			return 204, ""
		}
		return 200, `{"messages":[{"partition":0,"offset":0,"payload":{"a": 1,   "b":[1, 2]}},` +
			`{"partition":0,"offset":1,"payload":"hello"},{"partition":0,"offset":2,"payload":"hello","payload_encoding":"text"}]}`
	})
	r := against(b).run(t, "replay", "orders", "--partition", "0", "--from", "0", "--to", "2", "--raw")
	mustOK(t, r)
	if want := "{\"a\": 1,   \"b\":[1, 2]}\n\"hello\"\nhello\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
}

func TestReplayFromOldestToEnd(t *testing.T) {
	b := newBroker(t, partitionLog(40, 43))
	r := against(b).run(t, "replay", "orders", "--partition", "1")
	mustOK(t, r)
	if got := b.requests(); got[0].Path != "/v1/topics/orders" {
		t.Fatalf("first request %+v: want topic info for the oldest offset", got[0])
	}
	want := []string{"max=100&offset=40&partition=1", "max=100&offset=43&partition=1"}
	if got := consumeQueries(b); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("queries %q, want %q", got, want)
	}
	if !strings.Contains(r.stdout, "# p1@40\nm40\n# p1@41\nm41\n# p1@42\nm42\n") {
		t.Errorf("stdout %q", r.stdout)
	}
}

func TestReplayArgumentErrors(t *testing.T) {
	b := newBroker(t, partitionLog(0, 10))
	c := against(b)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "orders"}, `at least one of the flags in the group [partition since] is required`},
		{[]string{"replay", "orders", "--partition", "1", "--from", "9", "--to", "3"}, "--to 3: must not be before --from 9"},
		{[]string{"replay", "orders", "--partition", "7"}, "--partition 7: topic orders has partitions 0..1"},
		{[]string{"replay", "orders", "--partition", "0", "--max", "0"}, "--max 0: must be 1..1000"},
	} {
		r := c.run(t, tt.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// -o wide shows each message's id on its header line.
func TestReplayWideShowsTheID(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Path == "/v1/topics/orders" {
			return 200, `{"name":"orders","partition_stats":[{"index":0,"oldest_offset":0,"next_offset":1}]}`
		}
		if r.q("offset") != "0" {
			return 204, ""
		}
		return 200, `{"messages":[{"partition":0,"offset":0,"id":"w5ftc2tq8cgp1c00000000000fg","payload":"m0","payload_encoding":"text"}]}`
	})
	r := against(b).run(t, "replay", "orders", "--partition", "0", "--from", "0", "-o", "wide")
	mustOK(t, r)
	if !strings.Contains(r.stdout, " id=w5ftc2tq8cgp1c00000000000fg") {
		t.Fatalf("stdout %q", r.stdout)
	}
}
