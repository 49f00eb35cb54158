package client

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Produce sends each header as Narad-Header-<name>; a batch sends them
// as "headers" in JSON and NDJSON, and as a version-2 binary body (a body
// without headers stays version 1).
func TestProduceSendsHeaders(t *testing.T) {
	var got []*http.Request
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, bodies = append(got, r), append(bodies, b)
		if strings.HasSuffix(r.URL.Path, "/batch") {
			w.WriteHeader(202)
			io.WriteString(w, `{"accepted":1}`)
			return
		}
		w.WriteHeader(202)
	}))
	defer srv.Close()
	c := New(srv.URL, "", "", nil)
	hs := map[string]string{"trace-id": "t1", "content.type": "a, b"}
	if err := c.Produce(ctx, "orders", []byte("x"), ProduceOptions{Headers: hs}); err != nil {
		t.Fatal(err)
	}
	if v := got[0].Header.Values("Narad-Header-Trace-Id"); len(v) != 1 || v[0] != "t1" {
		t.Errorf("Narad-Header-Trace-Id: %v", v)
	}
	if v := got[0].Header.Get("Narad-Header-Content.type"); v != "a, b" {
		t.Errorf("Narad-Header-Content.type: %q (headers %v)", v, got[0].Header)
	}
	rec := BatchRecord{Payload: json.RawMessage(`1`), Headers: map[string]string{"a": "b"}}
	for _, f := range []BatchFormat{BatchJSON, BatchNDJSON} {
		if _, err := c.ProduceBatchAs(ctx, "orders", []BatchRecord{rec}, f); err != nil {
			t.Fatal(err)
		}
		if b := bodies[len(bodies)-1]; !bytes.Contains(b, []byte(`"headers":{"a":"b"}`)) {
			t.Errorf("%v body %s has no headers", f, b)
		}
	}
	if _, err := c.ProduceBatchAs(ctx, "orders", []BatchRecord{rec}, BatchBinary); err != nil {
		t.Fatal(err)
	}
	want := append([]byte("NRDB\x02"), binEncJSON|binHeaders)
	want = binary.BigEndian.AppendUint16(want, 1)
	want = append(want, 0, 1, 'a', 0, 1, 'b', 0, 0, 0, 1, '1')
	if b := bodies[len(bodies)-1]; !bytes.Equal(b, want) {
		t.Errorf("binary body %q, want %q", b, want)
	}
	if _, err := c.ProduceBatchAs(ctx, "orders", []BatchRecord{{Payload: json.RawMessage(`1`)}}, BatchBinary); err != nil {
		t.Fatal(err)
	}
	if b := bodies[len(bodies)-1]; !bytes.HasPrefix(b, []byte("NRDB\x01")) {
		t.Errorf("a binary body without headers starts %q", b[:5])
	}
}

// Consume and replay give Message.Headers; nil when the record has none.
func TestMessageHeaders(t *testing.T) {
	body := `{"messages":[{"topic":"t","partition":0,"offset":1,"payload":1,"timestamp":1,"headers":{"a":"b","narad-dlq-reason":"nacked"}},{"topic":"t","partition":0,"offset":2,"payload":2,"timestamp":1}]}`
	for _, msgs := range decodedBothWays(t, body, 2) {
		if msgs[0].Headers["a"] != "b" || msgs[0].Headers["narad-dlq-reason"] != "nacked" || msgs[1].Headers != nil {
			t.Errorf("headers %v and %v", msgs[0].Headers, msgs[1].Headers)
		}
	}
}

// decodedBothWays decodes a consume answer of n messages with the
// one-pass reader and with encoding/json, for a test to check both.
func decodedBothWays(t *testing.T, body string, n int) [][]Message {
	t.Helper()
	fast, ok := fastMessages([]byte(body))
	slow, err := slowMessages([]byte(body))
	if !ok || err != nil || len(fast) != n || len(slow) != n {
		t.Fatalf("%s: one-pass %v (took it: %v), encoding/json %v (%v); want %d messages", body, fast, ok, slow, err, n)
	}
	return [][]Message{fast, slow}
}

// A batch record's MsgID goes as "msg_id" in JSON and NDJSON, and in a
// binary body as flag 0x20 with the id's 2-byte length and bytes after
// the headers (a version-2 body, even without headers).
func TestProduceBatchSendsMsgID(t *testing.T) {
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, b)
		w.WriteHeader(202)
		io.WriteString(w, `{"accepted":1}`)
	}))
	defer srv.Close()
	c := New(srv.URL, "", "", nil)
	rec := BatchRecord{Payload: json.RawMessage(`1`), MsgID: "order-7"}
	for _, f := range []BatchFormat{BatchJSON, BatchNDJSON} {
		if _, err := c.ProduceBatchAs(ctx, "orders", []BatchRecord{rec}, f); err != nil {
			t.Fatal(err)
		}
		if b := bodies[len(bodies)-1]; !bytes.Contains(b, []byte(`"msg_id":"order-7"`)) {
			t.Errorf("%v body %s has no msg_id", f, b)
		}
	}
	key := "k"
	recs := []BatchRecord{rec, {Key: &key, PayloadBase64: "AA==", Headers: map[string]string{"a": "b"}, MsgID: "x"}}
	if _, err := c.ProduceBatchAs(ctx, "orders", recs, BatchBinary); err != nil {
		t.Fatal(err)
	}
	want := append([]byte("NRDB\x02"), binEncJSON|binMsgID, 0, 7)
	want = append(want, "order-7"...)
	want = append(want, 0, 0, 0, 1, '1')
	want = append(want, binEncBytes|binKey|binHeaders|binMsgID, 0, 0, 0, 1, 'k', 0, 1, 0, 1, 'a', 0, 1, 'b', 0, 1, 'x', 0, 0, 0, 1, 0)
	if b := bodies[len(bodies)-1]; !bytes.Equal(b, want) {
		t.Errorf("binary body %q, want %q", b, want)
	}
}
