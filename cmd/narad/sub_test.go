package main

import (
	"encoding/json"
	"fmt"
	"github.com/narad-io/narad/client"
	"strings"
	"sync"
	"testing"
	"time"
)

func init() {
	// Retries and polls run at full speed in tests; the schedule itself
	// is not what is under test.
	retryPace = client.Backoff{Initial: time.Millisecond, Max: time.Millisecond}
	ackBackoff = retryPace
	peekPoll = time.Millisecond
}

// queue is a fake topic handing out messages one consume at a time.
type queue struct {
	mu   sync.Mutex
	next int
	per  int // messages per consume
}

func (q *queue) take(max int) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(q.per, max)
	var msgs []string
	for range n {
		msgs = append(msgs, fmt.Sprintf(`{"topic":"orders","partition":0,"offset":%d,"payload":{"n":%d},"receipt_handle":"rh-%d","delivery_count":1}`, q.next, q.next, q.next))
		q.next++
	}
	return `{"messages":[` + strings.Join(msgs, ",") + `]}`
}

func maxOf(r req) int {
	var n int
	fmt.Sscan(r.q("max"), &n)
	return n
}

func TestSubCountConsumesAndAcks(t *testing.T) {
	q := &queue{per: 1}
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "GET" {
			return 200, q.take(maxOf(r))
		}
		return 204, ""
	})
	r := against(b).run(t, "sub", "orders", "--count", "2", "--wait", "2s")
	mustOK(t, r)
	got := b.requests()
	type want struct{ method, path, query string }
	wants := []want{
		{"GET", "/v1/topics/orders/consume", "max=2&wait=2s"},
		{"POST", "/v1/topics/orders/ack", "receipt_handle=rh-0"},
		{"GET", "/v1/topics/orders/consume", "max=1&wait=2s"},
		{"POST", "/v1/topics/orders/ack", "receipt_handle=rh-1"},
	}
	if len(got) != len(wants) {
		t.Fatalf("requests %+v", got)
	}
	for i, w := range wants {
		if got[i].Method != w.method || got[i].Path != w.path || got[i].Query.Encode() != w.query {
			t.Errorf("request %d: %s %s?%s, want %s %s?%s", i, got[i].Method, got[i].Path, got[i].Query.Encode(), w.method, w.path, w.query)
		}
	}
	wantOut := "# p0@0\n{\"n\":0}\n# p0@1\n{\"n\":1}\n"
	if r.stdout != wantOut {
		t.Errorf("stdout %q, want %q", r.stdout, wantOut)
	}
}

func TestSubRetriesTransientAck(t *testing.T) {
	q := &queue{per: 1}
	acks := 0
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "GET" {
			return 200, q.take(maxOf(r))
		}
		acks++
		if acks == 1 {
			return 503, `{"error":"leader moving"}`
		}
		return 204, ""
	})
	r := against(b).retrying("10s").run(t, "sub", "orders", "--count", "1", "--raw")
	mustOK(t, r)
	ackReqs := b.only("POST", "/v1/topics/orders/ack")
	if len(ackReqs) != 2 || ackReqs[0].q("receipt_handle") != "rh-0" || ackReqs[1].q("receipt_handle") != "rh-0" {
		t.Fatalf("acks %+v", ackReqs)
	}
	if r.stdout != "{\"n\":0}\n" {
		t.Errorf("raw stdout %q", r.stdout)
	}
}

func TestSubGivesUpOnAckAfterTheRetryBudget(t *testing.T) {
	q := &queue{per: 1}
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "GET" {
			return 200, q.take(maxOf(r))
		}
		return 503, `{"error":"unavailable"}`
	})
	r := against(b).retrying("100ms").run(t, "sub", "orders", "--count", "1")
	if r.code != 1 || !strings.Contains(r.stderr, "ack of partition 0 offset 0 failed: unavailable (HTTP 503) (gave up after") ||
		!strings.Contains(r.stderr, "1 acknowledgements failed") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if n := len(b.only("POST", "/v1/topics/orders/ack")); n < 2 {
		t.Errorf("%d ack tries, want retries", n)
	}
}

func TestSubBatchAckRetriesOnlyTransientHandles(t *testing.T) {
	q := &queue{per: 3}
	batches := 0
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "GET" {
			return 200, q.take(maxOf(r))
		}
		batches++
		var in struct {
			ReceiptHandles []string `json:"receipt_handles"`
		}
		json.Unmarshal([]byte(r.Body), &in)
		var res []string
		for _, h := range in.ReceiptHandles {
			status := 204
			if h == "rh-1" && batches == 1 {
				status = 503
			}
			if h == "rh-2" {
				status = 410
			}
			res = append(res, fmt.Sprintf(`{"receipt_handle":%q,"status":%d}`, h, status))
		}
		return 200, `{"results":[` + strings.Join(res, ",") + `]}`
	})
	r := against(b).run(t, "sub", "orders", "--count", "3", "--max", "5")
	if r.code != 1 {
		t.Fatalf("a permanently failed ack must fail the run: exit %d stderr %q", r.code, r.stderr)
	}
	acks := b.only("POST", "/v1/topics/orders/ack")
	if len(acks) != 2 || acks[0].Body != `{"receipt_handles":["rh-0","rh-1","rh-2"]}` || acks[1].Body != `{"receipt_handles":["rh-1"]}` {
		t.Fatalf("ack requests %+v", acks)
	}
	if consumes := b.only("GET", "/v1/topics/orders/consume"); len(consumes) != 1 || consumes[0].q("max") != "3" {
		t.Errorf("consumes %+v: want one asking for max=3", consumes)
	}
	if !strings.Contains(r.stderr, "ack of partition 0 offset 2 failed: Gone (HTTP 410)") {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestSubKeepsPollingThroughEmptyAnswers(t *testing.T) {
	q := &queue{per: 1}
	polls := 0
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "GET" {
			polls++
			if polls < 3 {
				return 204, ""
			}
			return 200, q.take(maxOf(r))
		}
		return 204, ""
	})
	mustOK(t, against(b).run(t, "sub", "orders", "-n", "1"))
	if polls != 3 {
		t.Errorf("%d polls, want 3", polls)
	}
}

func TestSubPeekTailsEveryPartitionWithoutAcks(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Path == "/v1/topics/orders" {
			return 200, `{"name":"orders","partitions":2,"partition_stats":[{"index":0,"next_offset":5},{"index":1,"next_offset":9}]}`
		}
		part, off := r.q("partition"), r.q("offset")
		if (part == "0" && off == "5") || (part == "1" && off == "9") {
			return 200, fmt.Sprintf(`{"messages":[{"partition":%s,"offset":%s,"payload":"p%s","payload_encoding":"text"}]}`, part, off, part)
		}
		return 204, ""
	})
	r := against(b).run(t, "sub", "orders", "--peek", "--count", "2", "--raw", "--wait", "1s")
	mustOK(t, r)
	got := b.requests()
	if got[0].Method != "GET" || got[0].Path != "/v1/topics/orders" {
		t.Fatalf("first request %+v: want topic info", got[0])
	}
	// Per partition, offsets start at the tail and advance past each read.
	want := map[string][]string{"0": {"5", "6"}, "1": {"9", "10"}}
	seen := map[string][]string{}
	for _, r := range got[1:] {
		if r.Method != "GET" || r.Path != "/v1/topics/orders/consume" || r.q("wait") != "1s" {
			t.Fatalf("unexpected request %+v (peek must never ack)", r)
		}
		seen[r.q("partition")] = append(seen[r.q("partition")], r.q("offset"))
	}
	for part, offs := range seen {
		if len(offs) == 0 || offs[0] != want[part][0] {
			t.Errorf("partition %s read offsets %v, want to start at %s", part, offs, want[part][0])
		}
		for _, o := range offs[1:] {
			if o != want[part][1] {
				t.Errorf("partition %s read offsets %v, want later reads at %s", part, offs, want[part][1])
			}
		}
	}
	if len(seen["0"]) == 0 || len(seen["1"]) == 0 {
		t.Errorf("not every partition was read: %v", seen)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !(lines[0] == "p0" && lines[1] == "p1" || lines[0] == "p1" && lines[1] == "p0") {
		t.Errorf("stdout %q", r.stdout)
	}
}
