package client

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"
)

func TestConsumeSingleMessage(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"topic":"orders","partition":1,"offset":41,"key":"c1",
		"payload":{"a":1},"timestamp":1767323045000,"receipt_handle":"rh-1","delivery_count":2}`})
	msgs, err := c.Consume(ctx, "orders", ConsumeOptions{Wait: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "GET", Path: "/v1/topics/orders/consume", Query: url.Values{"wait": {"1.5s"}}})
	if len(msgs) != 1 {
		t.Fatalf("got %d messages", len(msgs))
	}
	m := msgs[0]
	if m.Topic != "orders" || m.Partition != 1 || m.Offset != 41 || m.Key == nil || *m.Key != "c1" ||
		string(m.Payload) != `{"a":1}` || m.Timestamp != 1767323045000 || m.ReceiptHandle != "rh-1" || m.DeliveryCount != 2 {
		t.Errorf("decoded %+v", m)
	}
}

func TestConsumeVisibility(t *testing.T) {
	c, f := newFake(t, reply{status: 204}, reply{status: 204})
	if _, err := c.Consume(ctx, "orders", ConsumeOptions{Max: 10, Visibility: 5 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Consume(ctx, "orders", ConsumeOptions{Visibility: -time.Second}); err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "GET", Path: "/v1/topics/orders/consume", Query: url.Values{"max": {"10"}, "visibility": {"5m0s"}}},
		seen{Method: "GET", Path: "/v1/topics/orders/consume"})
}

func TestConsumeList(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"messages":[
		{"partition":2,"offset":10,"payload":"x"},{"partition":2,"offset":11,"payload":"eQ==","payload_encoding":"base64"}]}`})
	part, off := 2, uint64(10)
	msgs, err := c.Consume(ctx, "orders", ConsumeOptions{Partition: &part, Offset: &off, Max: 5})
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "GET", Path: "/v1/topics/orders/consume",
		Query: url.Values{"partition": {"2"}, "offset": {"10"}, "max": {"5"}}})
	if len(msgs) != 2 || msgs[0].Offset != 10 || msgs[1].Offset != 11 || msgs[1].PayloadEncoding != "base64" {
		t.Fatalf("got %+v", msgs)
	}
}

func TestConsumeNoContent(t *testing.T) {
	c, _ := newFake(t, reply{status: 204}, reply{status: 200, body: `{"messages":[]}`})
	for i := range 2 {
		msgs, err := c.Consume(ctx, "orders", ConsumeOptions{Max: 10})
		if err != nil || len(msgs) != 0 {
			t.Fatalf("call %d: got %v, %v; want no messages and no error", i, msgs, err)
		}
	}
}

func TestConsumeUnavailable(t *testing.T) {
	c, _ := newFake(t, reply{status: 503, body: `{"error":"partition 2 has no owner"}`, header: map[string]string{"Retry-After": "1"}})
	_, err := c.Consume(ctx, "orders", ConsumeOptions{})
	apiErr, ok := err.(*APIError)
	if !ok || apiErr.Status != 503 || apiErr.RetryAfter != time.Second || apiErr.Message != "partition 2 has no owner" {
		t.Fatalf("got %#v", err)
	}
}

func TestUnixTimeUnits(t *testing.T) {
	secs := time.Date(2026, 11, 30, 3, 15, 44, 0, time.UTC)
	ms := secs.Add(123 * time.Millisecond)
	for _, tt := range []struct {
		in   int64
		want time.Time
	}{
		{0, time.Time{}},
		{secs.Unix(), secs},
		{ms.UnixMilli(), ms},
		{1, time.Unix(1, 0).UTC()},
	} {
		if got := UnixTime(tt.in); !got.Equal(tt.want) {
			t.Errorf("UnixTime(%d) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if got := (Message{Timestamp: secs.Unix()}).Time(); !got.Equal(secs) {
		t.Errorf("Message.Time = %v", got)
	}
}

// A key comes back as produced: UTF-8 as key, other bytes as key_base64.
func TestMessageKeyBytes(t *testing.T) {
	c, _ := newFake(t, reply{status: 200, body: `{"messages":[{"offset":1,"key":"café","payload":1},
		{"offset":2,"key_base64":"wyg=","payload":1},{"offset":3,"payload":1}]}`})
	msgs, err := c.Consume(ctx, "orders", ConsumeOptions{Max: 3})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("%v %v", msgs, err)
	}
	for i, want := range [][]byte{[]byte("café"), {0xc3, 0x28}, nil} {
		got, err := msgs[i].KeyBytes()
		if err != nil || string(got) != string(want) || (got == nil) != (want == nil) {
			t.Errorf("message %d: key %q, %v; want %q", i, got, err, want)
		}
	}
	if _, err := (Message{KeyBase64: "%%"}).KeyBytes(); err == nil {
		t.Error("a bad key_base64 decoded")
	}
}

func TestMessageBytes(t *testing.T) {
	tests := []struct {
		name     string
		payload  string
		encoding string
		want     string
		wantErr  bool
	}{
		{"object verbatim", `{"a": [1, 2]}`, "", `{"a": [1, 2]}`, false},
		{"number verbatim", `3.14`, "", `3.14`, false},
		{"a JSON string is its JSON", `"line\nnext \u00e9"`, "", `"line\nnext \u00e9"`, false},
		{"text is its text", `"line\nnext \u00e9"`, "text", "line\nnext é", false},
		{"text not a string", `17`, "text", "", true},
		{"an unknown encoding", `"x"`, "rot13", "", true},
		{"base64", `"AQL/"`, "base64", "\x01\x02\xff", false},
		{"base64 without padding", `"AQI"`, "base64", "\x01\x02", false},
		{"base64 not a string", `{"x":1}`, "base64", "", true},
		{"base64 garbage", `"***"`, "base64", "", true},
		{"null is its JSON text", `null`, "", "null", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Message{Payload: json.RawMessage(tt.payload), PayloadEncoding: tt.encoding}.Bytes()
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want error, got %q", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
