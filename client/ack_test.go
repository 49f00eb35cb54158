package client

import (
	"net/url"
	"testing"
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
	f.expect(
		seen{Method: "POST", Path: "/v1/topics/orders/ack", Query: url.Values{"receipt_handle": {"rh/1+="}}},
		seen{Method: "POST", Path: "/v1/topics/orders/ack", Query: url.Values{"receipt_handle": {"rh2"}, "extend": {"true"}}},
		seen{Method: "POST", Path: "/v1/topics/orders/ack", Query: url.Values{"receipt_handle": {"rh3"}, "extend": {"0"}}},
	)
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
