package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBenchSingleProduce(t *testing.T) {
	b := newBroker(t, accept)
	r := against(b).run(t, "bench", "orders", "--producers", "3", "--messages", "10", "--size", "16")
	mustOK(t, r)
	bodies := produceBodies(b, "orders")
	if len(bodies) != 10 || len(b.requests()) != 10 {
		t.Fatalf("%d produces (%d requests), want 10", len(bodies), len(b.requests()))
	}
	for _, body := range bodies {
		if body != strings.Repeat("x", 16) {
			t.Fatalf("payload %q, want 16 bytes", body)
		}
	}
	if !strings.HasPrefix(r.stdout, "produce: 10 messages in ") || !strings.Contains(r.stdout, "msg/s") ||
		!strings.Contains(r.stdout, "10 requests, latency p50 ") || !strings.Contains(r.stdout, " p99 ") {
		t.Errorf("stdout %q", r.stdout)
	}
}

func TestBenchBatchProduceSplitsExactly(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		var in struct {
			Records []json.RawMessage `json:"records"`
		}
		json.Unmarshal([]byte(r.Body), &in)
		return 202, fmt.Sprintf(`{"accepted":%d}`, len(in.Records))
	})
	r := against(b).run(t, "bench", "orders", "--producers", "2", "--messages", "10", "--batch", "4", "--size", "3")
	mustOK(t, r)
	reqs := b.only("POST", "/v1/topics/orders/produce/batch")
	total := 0
	var sizes []int
	for _, q := range reqs {
		var in struct {
			Records []struct {
				Payload json.RawMessage `json:"payload"`
			} `json:"records"`
		}
		if err := json.Unmarshal([]byte(q.Body), &in); err != nil {
			t.Fatal(err)
		}
		for _, rec := range in.Records {
			if string(rec.Payload) != `"xxx"` {
				t.Fatalf("record payload %s", rec.Payload)
			}
		}
		sizes = append(sizes, len(in.Records))
		total += len(in.Records)
	}
	if total != 10 || len(reqs) != 3 || len(b.requests()) != 3 {
		t.Fatalf("batches %v (total %d, %d requests), want 4+4+2", sizes, total, len(b.requests()))
	}
	if !strings.Contains(r.stdout, "produce: 10 messages") || !strings.Contains(r.stdout, "3 requests") {
		t.Errorf("stdout %q", r.stdout)
	}
}

// The consume phase acks every message; a 503 for one handle (acked-ahead
// window full) is retried for that handle alone and counted, not failed.
func TestBenchConsume(t *testing.T) {
	var mu sync.Mutex
	produced, next := 0, 0
	settled := map[string]int{}
	refused := false
	b := newBroker(t, func(r req) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/produce"):
			produced++
			return 202, ""
		case r.Method == "GET":
			var msgs []string
			for len(msgs) < maxOf(r) && next < produced && len(msgs) < 4 {
				msgs = append(msgs, fmt.Sprintf(`{"partition":0,"offset":%d,"payload":"x","receipt_handle":"h%d"}`, next, next))
				next++
			}
			if len(msgs) == 0 {
				return 204, ""
			}
			return 200, `{"messages":[` + strings.Join(msgs, ",") + `]}`
		case r.Query.Has("receipt_handle"):
			settled[r.Query.Get("receipt_handle")]++
			return 204, ""
		default:
			var in struct {
				ReceiptHandles []string `json:"receipt_handles"`
			}
			json.Unmarshal([]byte(r.Body), &in)
			var res []string
			for _, h := range in.ReceiptHandles {
				status := 204
				if h == "h1" && !refused {
					refused, status = true, 503
				} else {
					settled[h]++
				}
				res = append(res, fmt.Sprintf(`{"receipt_handle":%q,"status":%d}`, h, status))
			}
			return 200, `{"results":[` + strings.Join(res, ",") + `]}`
		}
	})
	r := against(b).run(t, "bench", "orders", "--producers", "2", "--messages", "9", "--consume")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "produce: 9 messages") || !strings.Contains(r.stdout, "consume: 9 messages") ||
		!strings.Contains(r.stdout, "consume: 1 acks retried after a transient answer") {
		t.Errorf("stdout %q", r.stdout)
	}
	if !refused || len(settled) != 9 {
		t.Errorf("settled %v (refused once: %v), want each of 9 handles", settled, refused)
	}
	for h, n := range settled {
		if n != 1 {
			t.Errorf("%s settled %d times", h, n)
		}
	}
}

func TestBenchReportsFailures(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 500, `{"error":"disk full"}` })
	r := against(b).run(t, "bench", "orders", "--producers", "1", "--messages", "2")
	if r.code != 1 || !strings.Contains(r.stdout, "produce: 2 of 2 requests failed; first: disk full (HTTP 500)") ||
		!strings.Contains(r.stderr, "narad: 2 of 2 requests failed") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {95, 95 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := percentile(ds, tt.p); got != tt.want {
			t.Errorf("p%v = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("single sample p99 = %v", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("empty p50 = %v", got)
	}
}

// A broker that fails every consume must end the consume phase, not be
// polled forever.
func TestBenchConsumeGivesUpOnAFailingBroker(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "GET" {
			return 500, `{"error":"broken"}`
		}
		return 202, ""
	})
	r := against(b).run(t, "bench", "orders", "--producers", "2", "--messages", "4", "--consume")
	if r.code != 1 || !strings.Contains(r.stdout, "consume: 6 of 6 requests failed; first: broken (HTTP 500)") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}
