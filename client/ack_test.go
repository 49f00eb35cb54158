package client

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestAckExtendNack(t *testing.T) {
	c, f := newFake(t, reply{status: 204})
	if err := c.Ack(ctx, "orders", "rh/1+="); err != nil {
		t.Fatal(err)
	}
	if err := c.Extend(ctx, "orders", "rh2"); err != nil {
		t.Fatal(err)
	}
	if err := c.Nack(ctx, "orders", "rh3"); err != nil {
		t.Fatal(err)
	}
	if err := c.ExtendFor(ctx, "orders", "rh4", 45*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.ExtendFor(ctx, "orders", "rh5", 1500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics/orders/ack", Query: url.Values{"receipt_handle": {"rh/1+="}}},
		seen{Method: "POST", Path: "/v1/topics/orders/ack", Query: url.Values{"receipt_handle": {"rh2"}, "extend": {"true"}}},
		seen{Method: "POST", Path: "/v1/topics/orders/ack", Query: url.Values{"receipt_handle": {"rh3"}, "extend": {"0"}}},
		seen{Method: "POST", Path: "/v1/topics/orders/ack", Query: url.Values{"receipt_handle": {"rh4"}, "extend": {"45s"}}},
		seen{Method: "POST", Path: "/v1/topics/orders/ack", Query: url.Values{"receipt_handle": {"rh5"}, "extend": {"1.5ms"}}},
	)
}

// ExtendFor never sends a duration that would nack (0) or that the
// server would read as something else: zero and negative are refused
// before any request.
func TestExtendForRefusesNonPositive(t *testing.T) {
	c, f := newFake(t, reply{status: 204})
	for _, d := range []time.Duration{0, -time.Second} {
		if err := c.ExtendFor(ctx, "orders", "rh", d); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Fatalf("ExtendFor(%v) = %v, want a refusal", d, err)
		}
	}
	f.expect()
}

func TestAckExpiredHandle(t *testing.T) {
	c, _ := newFake(t, reply{status: 410, body: `{"error":"receipt handle expired"}`})
	err := c.Ack(ctx, "orders", "old")
	if StatusOf(err) != 410 || IsTransient(err) {
		t.Fatalf("got %v (transient=%v)", err, IsTransient(err))
	}
}

func TestAckBatch(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"results":[{"receipt_handle":"a","status":204},{"receipt_handle":"b","status":410}]}`})
	res, err := c.AckBatch(ctx, "orders", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "POST", Path: "/v1/topics/orders/ack", ContentType: "application/json",
		Body: `{"receipt_handles":["a","b"]}`})
	if len(res) != 2 || res[0] != (AckResult{"a", 204}) || res[1] != (AckResult{"b", 410}) {
		t.Fatalf("got %+v", res)
	}
}
