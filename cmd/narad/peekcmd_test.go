package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// peekLog is a topic of two partitions: partition 0's frontier at 2 of 5
// records, partition 1's at 1 of 3 (oldest 0); record p:o was committed
// at ms 10*o + p, so the merged order interleaves.
func peekLog(r req) (int, string) {
	if r.Path == "/v1/topics/orders.dlq" {
		return 200, `{"name":"orders.dlq","partition_stats":[` +
			`{"index":0,"oldest_offset":0,"next_offset":5,"consumer_frontier":2},` +
			`{"index":1,"oldest_offset":0,"next_offset":3,"consumer_frontier":1}]}`
	}
	p, _ := strconv.Atoi(r.q("partition"))
	off, _ := strconv.Atoi(r.q("offset"))
	max, _ := strconv.Atoi(r.q("max"))
	end := map[int]int{0: 5, 1: 3}[p]
	var msgs []string
	for o := off; o < end && len(msgs) < max && len(msgs) < 2; o++ { // two a read: the command asks again
		msgs = append(msgs, fmt.Sprintf(`{"topic":"orders.dlq","partition":%d,"offset":%d,"payload":"d%d.%d","payload_encoding":"text","timestamp":1,"timestamp_ms":%d}`, p, o, p, o, 1796320800000+10*o+p))
	}
	if len(msgs) == 0 {
		return 204, ""
	}
	return 200, `{"messages":[` + strings.Join(msgs, ",") + `]}`
}

// peek starts at each partition's consumer frontier, reads by offset (no
// lease: no consume without an offset), and prints the oldest first.
func TestPeekFromFrontier(t *testing.T) {
	b := newBroker(t, peekLog)
	r := against(b).run(t, "peek", "orders.dlq", "--raw")
	mustOK(t, r)
	if want := "d1.1\nd0.2\nd1.2\nd0.3\nd0.4\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	for _, q := range b.only("GET", "/v1/topics/orders.dlq/consume") {
		if q.q("offset") == "" || q.q("partition") == "" {
			t.Errorf("a consume that leases: %v", q.Query)
		}
		if p, o := q.q("partition"), q.q("offset"); (p == "0" && o < "2") || (p == "1" && o < "1") {
			t.Errorf("read below the frontier: %v", q.Query)
		}
	}
	r = against(b).run(t, "peek", "orders.dlq", "--max", "2", "-o", "json")
	mustOK(t, r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"partition":1,"offset":1`) || !strings.Contains(lines[1], `"partition":0,"offset":2`) {
		t.Errorf("stdout %q", r.stdout)
	}
}

func TestPeekNothingWaitsAndErrors(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"name":"orders.dlq","partition_stats":[{"index":0,"oldest_offset":4,"next_offset":4,"consumer_frontier":4}]}`
	})
	r := against(b).run(t, "peek", "orders.dlq")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "nothing waits in orders.dlq") || len(b.requests()) != 1 {
		t.Errorf("exit %d stdout %q stderr %q, %d requests", r.code, r.stdout, r.stderr, len(b.requests()))
	}
	if r := against(b).run(t, "peek", "orders.dlq", "--max", "0"); r.code != 1 || !strings.Contains(r.stderr, "--max 0: must be 1..1000") {
		t.Errorf("--max 0: exit %d stderr %q", r.code, r.stderr)
	}
	b = newBroker(t, func(req) (int, string) { return 404, `{"error":"topic \"nope\" does not exist"}` })
	if r := against(b).run(t, "peek", "nope"); r.code != 3 {
		t.Errorf("unknown topic: exit %d stderr %q", r.code, r.stderr)
	}
}
