package client

import (
	"net/url"
	"testing"
	"time"
)

func TestOffsetsAt(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"topic":"orders","time_ms":1796320800000,"partitions":[` +
		`{"partition":0,"offset":12},{"partition":1,"error":"partition 1 of \"orders\" is being moved; retry"}]}`})
	v, err := c.OffsetsAt(ctx, "orders", "10m", nil)
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "GET", Path: "/v1/topics/orders/offsets", Query: url.Values{"time": {"10m"}}})
	if v.TimeMs != 1796320800000 || len(v.Partitions) != 2 || *v.Partitions[0].Offset != 12 ||
		v.Partitions[1].Offset != nil || v.Partitions[1].Error == "" {
		t.Fatalf("decoded %+v", v)
	}
	p := 1
	c, f = newFake(t, reply{status: 200, body: `{"topic":"orders","time_ms":5,"partitions":[{"partition":1,"offset":0}]}`})
	if _, err := c.OffsetsAt(ctx, "orders", TimeOf(time.UnixMilli(5)), &p); err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "GET", Path: "/v1/topics/orders/offsets", Query: url.Values{"time": {"5"}, "partition": {"1"}}})
}

// ReplaySinceAll follows next_page_token until a page is caught up, and
// sends since each time (the token carries its own, so either way works).
func TestReplaySinceAllFollowsTokens(t *testing.T) {
	c, f := newFake(t,
		reply{status: 200, body: `{"messages":[{"topic":"orders","partition":1,"offset":4,"payload":1,"timestamp":1796320800,"timestamp_ms":1796320800004}],"next_page_token":"T1","caught_up":false}`},
		reply{status: 200, body: `{"messages":[],"next_page_token":"T2","caught_up":false}`},
		reply{status: 200, body: `{"messages":[{"topic":"orders","partition":0,"offset":9,"payload":2,"timestamp":1796320800,"timestamp_ms":1796320800011}],"next_page_token":"T3","caught_up":true}`},
	)
	var got []uint64
	for m, err := range c.ReplaySinceAll(ctx, "orders", SinceOptions{Since: "10m", Max: 50}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Offset)
		if m.Time() != time.UnixMilli(m.TimestampMs).UTC() || m.TimestampMs == 0 || len(m.Raw()) == 0 {
			t.Errorf("message %+v", m)
		}
	}
	if len(got) != 2 || got[0] != 4 || got[1] != 9 {
		t.Fatalf("offsets %v", got)
	}
	q := func(tok string) url.Values {
		v := url.Values{"since": {"10m"}, "max": {"50"}}
		if tok != "" {
			v.Set("page_token", tok)
		}
		return v
	}
	path := "/v1/topics/orders/replay"
	f.expect(seen{Method: "GET", Path: path, Query: q("")}, seen{Method: "GET", Path: path, Query: q("T1")}, seen{Method: "GET", Path: path, Query: q("T2")})
}

// Breaking out stops the paging; an error is yielded and ends it.
func TestReplaySinceAllStopsAndFails(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"messages":[{"partition":0,"offset":0,"payload":1},{"partition":0,"offset":1,"payload":1}],"next_page_token":"T","caught_up":false}`})
	p := 0
	for range c.ReplaySinceAll(ctx, "orders", SinceOptions{Since: "0", Partition: &p}) {
		break
	}
	f.expect(seen{Method: "GET", Path: "/v1/topics/orders/replay", Query: url.Values{"since": {"0"}, "partition": {"0"}}})

	c, _ = newFake(t, reply{status: 400, body: `{"error":"page_token is malformed"}`})
	n := 0
	for _, err := range c.ReplaySinceAll(ctx, "orders", SinceOptions{PageToken: "x"}) {
		n++
		if e, ok := err.(*APIError); !ok || e.Status != 400 {
			t.Fatalf("got %v", err)
		}
	}
	if n != 1 {
		t.Fatalf("%d yields", n)
	}
}

// The fast decoder reads timestamp_ms, which every message carries: it
// used to decline the whole answer for it, sending every consume down the
// slow path.
func TestFastMessagesReadTimestampMs(t *testing.T) {
	msgs, ok := fastMessages([]byte(`{"messages":[{"topic":"orders","partition":0,"offset":3,"payload":{},"timestamp":1796320800,"timestamp_ms":1796320800004}]}`))
	if !ok || len(msgs) != 1 || msgs[0].TimestampMs != 1796320800004 {
		t.Fatalf("%v %+v", ok, msgs)
	}
}
