package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// pMsg is a delivered record with the fields that say how its key and
// payload were encoded. Payload is a json.RawMessage, which holds the
// value's bytes exactly as the server wrote them.
type pMsg struct {
	Offset          uint64          `json:"offset"`
	Key             *string         `json:"key"`
	KeyBase64       *string         `json:"key_base64"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding"`
	ReceiptHandle   string          `json:"receipt_handle"`
}

// pWant is what one stored record must look like in every answer.
type pWant struct {
	payload  string // the payload value's bytes in the answer
	encoding string // payload_encoding; "" for JSON, which has none
	key      string // "key" field; "" none
	keyB64   string // "key_base64" field; "" none
}

func (w pWant) check(t testing.TB, what string, m pMsg) {
	t.Helper()
	// A decoded json.RawMessage has no whitespace around the value; the
	// answer's own bytes are checked by holds.
	if string(m.Payload) != strings.TrimSpace(w.payload) {
		t.Errorf("%s, offset %d: payload %s, want byte for byte %s", what, m.Offset, m.Payload, w.payload)
	}
	if m.PayloadEncoding != w.encoding {
		t.Errorf("%s, offset %d: payload_encoding %q, want %q", what, m.Offset, m.PayloadEncoding, w.encoding)
	}
	if got := deref(m.Key); got != w.key || (m.Key != nil) != (w.key != "") {
		t.Errorf("%s, offset %d: key %q (set: %t), want %q", what, m.Offset, got, m.Key != nil, w.key)
	}
	if got := deref(m.KeyBase64); got != w.keyB64 || (m.KeyBase64 != nil) != (w.keyB64 != "") {
		t.Errorf("%s, offset %d: key_base64 %q (set: %t), want %q", what, m.Offset, got, m.KeyBase64 != nil, w.keyB64)
	}
}

// holds asserts the answer's bytes hold the payload as stored, whitespace
// around the value included: a consumer that reads the body sees it too.
func (w pWant) holds(t testing.TB, what string, a biAnswer) {
	t.Helper()
	if !bytes.Contains(a.body, []byte(`"payload":`+w.payload+`,`)) {
		t.Errorf("%s: body %s does not hold the payload %q", what, a.body, w.payload)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestPayloadsComeBackByteForByteFromTheNode: records written through the
// real node's single and batch produce, stored in its log, come back from
// queue consume, batch replay and single replay exactly as sent — a JSON
// body with its own whitespace, the text hello flagged "text" apart from
// the JSON string "hello", bytes as base64, a key that is not UTF-8 as
// key_base64 (docs/concepts.md, "Records").
func TestPayloadsComeBackByteForByteFromTheNode(t *testing.T) {
	n := startNode(t)
	biWantStatus(t, biDo(t, n, "POST", "/v1/topics", "application/json", []byte(`{"name":"raw","partitions":1}`)), http.StatusCreated)
	produce := func(q, contentType, body string) {
		t.Helper()
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics/raw/produce?partition=0"+q, contentType, []byte(body)), http.StatusAccepted)
	}
	// One at a time: each must be visible before the next is sent, so that
	// the offsets are the order below.
	var want []pWant
	step := func(w pWant, send func()) {
		t.Helper()
		send()
		want = append(want, w)
		biWaitHWMs(t, n, "raw", []uint64{uint64(len(want))})
	}
	step(pWant{payload: `{"a": 1,   "b":[1, 2]}`, key: "k1"}, func() { produce("&key=k1", "application/json", `{"a": 1,   "b":[1, 2]}`) })
	step(pWant{payload: "{\n  \"a\": 1\n}\n"}, func() { produce("", "application/json", "{\n  \"a\": 1\n}\n") })
	step(pWant{payload: `"hello"`, encoding: "text"}, func() { produce("", "text/plain", `hello`) })
	step(pWant{payload: `"hello"`}, func() { produce("", "application/json", `"hello"`) })
	step(pWant{payload: `"/wAB"`, encoding: "base64", keyB64: "/w=="}, func() { produce("&key=%FF", "application/octet-stream", "\xff\x00\x01") })
	// Batch produce takes key_base64 as consume shows it, so a consumer can
	// send a record it received back unchanged.
	step(pWant{payload: `"AQL/"`, encoding: "base64", keyB64: "wyg="}, func() {
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics/raw/produce/batch", "application/json",
			[]byte(`{"records":[{"partition":0,"key_base64":"wyg=","payload_base64":"AQL/"}]}`)), http.StatusAccepted)
	})
	step(pWant{payload: `"plain text"`, encoding: "text", keyB64: "wyg="}, func() {
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics/raw/produce/batch", "application/json",
			[]byte(`{"records":[{"partition":0,"key_base64":"wyg=","payload":"plain text"}]}`)), http.StatusAccepted)
	})
	step(pWant{payload: `{"x":  [1,  2]}`, key: "café"}, func() {
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics/raw/produce/batch", "application/json",
			[]byte(`{"records":[{"partition":0,"key":"café","payload":{"x":  [1,  2]}}]}`)), http.StatusAccepted)
	})

	page := func(what, q string) []pMsg {
		t.Helper()
		a := biDo(t, n, "GET", "/v1/topics/raw/consume?"+q, "", nil)
		biWantStatus(t, a, http.StatusOK)
		var p struct {
			Messages []pMsg `json:"messages"`
		}
		if err := json.Unmarshal(a.body, &p); err != nil {
			t.Fatalf("%s: %v: %v", what, err, a)
		}
		if len(p.Messages) != len(want) {
			t.Fatalf("%s: %d messages, want %d: %v", what, len(p.Messages), len(want), a)
		}
		for _, w := range want {
			w.holds(t, what, a)
		}
		return p.Messages
	}
	for i, m := range page("queue consume", fmt.Sprintf("partition=0&max=%d", len(want)+1)) {
		if m.Offset != uint64(i) || m.ReceiptHandle == "" {
			t.Fatalf("queue consume: message %d is offset %d with handle %q", i, m.Offset, m.ReceiptHandle)
		}
		want[i].check(t, "queue consume", m)
	}
	for i, m := range page("batch replay", fmt.Sprintf("partition=0&offset=0&max=%d", len(want)+1)) {
		if m.Offset != uint64(i) {
			t.Fatalf("batch replay: message %d is offset %d", i, m.Offset)
		}
		want[i].check(t, "batch replay", m)
	}
	for i, w := range want {
		a := biDo(t, n, "GET", fmt.Sprintf("/v1/topics/raw/consume?partition=0&offset=%d", i), "", nil)
		biWantStatus(t, a, http.StatusOK)
		var m pMsg
		if err := json.Unmarshal(a.body, &m); err != nil {
			t.Fatalf("single replay of %d: %v: %v", i, err, a)
		}
		w.check(t, "single replay", m)
		w.holds(t, fmt.Sprintf("single replay of %d", i), a)
	}
}
