package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/storage"
)

// extendNode is a real one-node broker on a fake clock behind the API,
// with topic "jobs" (visibility_timeout_ms 30000; records go to partition 0).
type extendNode struct {
	t   *testing.T
	s   *Server
	b   *broker.Broker
	clk *clock.Fake
}

func newExtendNode(t *testing.T) *extendNode {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	b := realBroker(t, clk.Now, "jobs")
	return &extendNode{t: t, s: apiOver(b), b: b, clk: clk}
}

func (n *extendNode) do(method, target, body string) *httptest.ResponseRecorder {
	n.t.Helper()
	rec := httptest.NewRecorder()
	n.s.ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader(body)))
	return rec
}

// produce commits one record to the partition's log; consume leases what
// is deliverable and returns its receipt handle and delivery count (""
// when nothing is).
func (n *extendNode) produce() {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := n.b.Commit(ctx, "jobs", 0, 0, []storage.Record{{Payload: []byte("x")}}, storage.Source{}); err != nil {
		n.t.Fatal(err)
	}
}

func (n *extendNode) consume() (handle string, count int) {
	n.t.Helper()
	return n.consumeQuery("")
}

func (n *extendNode) consumeQuery(query string) (handle string, count int) {
	n.t.Helper()
	w := n.do("GET", "/v1/topics/jobs/consume"+query, "")
	if w.Code == http.StatusNoContent {
		return "", 0
	}
	var m struct {
		ReceiptHandle string `json:"receipt_handle"`
		DeliveryCount int    `json:"delivery_count"`
	}
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &m) != nil {
		n.t.Fatalf("consume: %d %s", w.Code, w.Body)
	}
	return m.ReceiptHandle, m.DeliveryCount
}

func (n *extendNode) ack(handle, extend string) *httptest.ResponseRecorder {
	n.t.Helper()
	target := "/v1/topics/jobs/ack?receipt_handle=" + url.QueryEscape(handle)
	if extend != "" {
		target += "&extend=" + url.QueryEscape(extend)
	}
	return n.do("POST", target, "")
}

// extend=<duration> makes the lease live that long from now, shorter or
// longer than the topic's 30 s; extend=true is the topic's timeout; a
// zero duration nacks.
func TestAckExtendForADuration(t *testing.T) {
	for _, tc := range []struct {
		extend string
		life   time.Duration // from the extend; 0: nacked, deliverable at once
	}{
		{"45s", 45 * time.Second},
		{"2s", 2 * time.Second},
		{"2000", 2 * time.Second}, // integer milliseconds
		{"true", 30 * time.Second},
		{"0", 0},
		{"0s", 0},
		{"0ms", 0},
	} {
		t.Run(tc.extend, func(t *testing.T) {
			n := newExtendNode(t)
			n.produce()
			h, c := n.consume()
			if h == "" || c != 1 {
				t.Fatalf("first consume: %q %d", h, c)
			}
			n.clk.Advance(time.Second)
			if w := n.ack(h, tc.extend); w.Code != http.StatusNoContent {
				t.Fatalf("extend=%s: %d %s", tc.extend, w.Code, w.Body)
			}
			if tc.life > 0 {
				n.clk.Advance(tc.life - time.Millisecond)
				if again, _ := n.consume(); again != "" {
					t.Fatalf("extend=%s: redelivered 1ms before it ran out", tc.extend)
				}
				n.clk.Advance(time.Millisecond)
			}
			again, c := n.consume()
			if again == "" || again == h || c != 2 {
				t.Fatalf("extend=%s: after it ran out consume gave %q (count %d), want a new lease, count 2", tc.extend, again, c)
			}
			if w := n.ack(h, ""); w.Code != http.StatusGone {
				t.Fatalf("extend=%s: the old handle acks with %d after its lease ended, want 410", tc.extend, w.Code)
			}
		})
	}
}

// A refused extend changes nothing: the lease keeps its expiry (it is not
// extended, not nacked) and the same handle acks afterwards.
func TestAckExtendRefusalLeavesTheLease(t *testing.T) {
	n := newExtendNode(t)
	n.produce()
	h, _ := n.consume()
	for _, v := range []string{"-1", "-1s", "13h", "43200001", "500us", "abc", "false", "1d"} {
		if w := n.ack(h, v); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "extend") {
			t.Fatalf("extend=%s: %d %s, want a 400 naming extend", v, w.Code, w.Body)
		}
	}
	// Not nacked: nothing to deliver. Not extended: it still ends at 30 s.
	if again, _ := n.consume(); again != "" {
		t.Fatal("a refused extend released the lease")
	}
	n.clk.Advance(30*time.Second - time.Millisecond)
	if w := n.ack(h, ""); w.Code != http.StatusNoContent {
		t.Fatalf("ack after the refused extends: %d %s", w.Code, w.Body)
	}
}

// consume?visibility=<duration> leases for that long instead of the
// topic's 30 s; the next consume without it is back to 30 s.
func TestConsumeVisibilityParameter(t *testing.T) {
	for _, tc := range []struct {
		visibility string
		life       time.Duration
	}{{"2s", 2 * time.Second}, {"1500", 1500 * time.Millisecond}, {"1h", time.Hour}} {
		t.Run(tc.visibility, func(t *testing.T) {
			n := newExtendNode(t)
			n.produce()
			h, c := n.consumeQuery("?visibility=" + tc.visibility)
			if h == "" || c != 1 {
				t.Fatalf("first consume: %q %d", h, c)
			}
			n.clk.Advance(tc.life - time.Millisecond)
			if again, _ := n.consume(); again != "" {
				t.Fatal("redelivered 1ms before the consume's visibility ended")
			}
			n.clk.Advance(time.Millisecond)
			again, c := n.consume()
			if again == "" || c != 2 {
				t.Fatalf("after the consume's visibility: %q (count %d), want a second delivery", again, c)
			}
			n.clk.Advance(30*time.Second - time.Millisecond)
			if w := n.ack(again, ""); w.Code != http.StatusNoContent {
				t.Fatalf("a consume without visibility leased for less than 30s: ack %d %s", w.Code, w.Body)
			}
		})
	}
}
