package client

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestProduce(t *testing.T) {
	c, f := newFake(t, reply{status: 202})
	key, part := "c1", 2
	if err := c.Produce(ctx, "orders", []byte(`{"id":1}`), ProduceOptions{Key: &key, Partition: &part}); err != nil {
		t.Fatal(err)
	}
	if err := c.Produce(ctx, "orders", []byte("plain text"), ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Produce(ctx, "orders", []byte{0x01, 0xff}, ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics/orders/produce", Query: url.Values{"key": {"c1"}, "partition": {"2"}},
			Body: `{"id":1}`, ContentType: "application/json"},
		seen{Method: "POST", Path: "/v1/topics/orders/produce", Body: "plain text", ContentType: "text/plain; charset=utf-8"},
		seen{Method: "POST", Path: "/v1/topics/orders/produce", Body: "\x01\xff", ContentType: "application/octet-stream"},
	)
}

// A produce returns the record's message id and partition; a node that
// answers an empty body (before message ids) gives an empty Produced.
func TestProduceWithID(t *testing.T) {
	c, _ := newFake(t, reply{status: 202, body: `{"id":"w5ftc2tq8cgp1c00000000000fg","partition":3}` + "\n"})
	got, err := c.ProduceWithID(ctx, "orders", []byte("x"), ProduceOptions{})
	if err != nil || got != (Produced{ID: "w5ftc2tq8cgp1c00000000000fg", Partition: 3}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	c, _ = newFake(t, reply{status: 202})
	if got, err := c.ProduceWithID(ctx, "orders", []byte("x"), ProduceOptions{}); err != nil || got != (Produced{}) {
		t.Fatalf("empty answer: %+v, %v", got, err)
	}
	c, _ = newFake(t, reply{status: 202, body: `{"accepted":2,"ids":["wa","wb"]}`})
	b, err := c.ProduceBatchWithIDs(ctx, "orders", []BatchRecord{{Payload: json.RawMessage("1")}, {Payload: json.RawMessage("2")}}, BatchNDJSON)
	if err != nil || b.Accepted != 2 || strings.Join(b.IDs, ",") != "wa,wb" {
		t.Fatalf("batch: %+v, %v", b, err)
	}
}

func TestProduceRejected(t *testing.T) {
	c, _ := newFake(t, reply{status: 429, body: `{"error":"partition full"}`, header: map[string]string{"Retry-After": "3"}})
	err := c.Produce(ctx, "orders", []byte("x"), ProduceOptions{})
	apiErr, ok := err.(*APIError)
	if !ok || apiErr.Status != 429 || apiErr.Message != "partition full" || apiErr.RetryAfter.Seconds() != 3 {
		t.Fatalf("got %#v", err)
	}
	if !IsTransient(err) {
		t.Error("429 should be transient")
	}
}

func TestProduceBatch(t *testing.T) {
	c, f := newFake(t, reply{status: 202, body: `{"accepted":3}`})
	key, part := "c1", 2
	n, err := c.ProduceBatch(ctx, "orders", []BatchRecord{
		{Key: &key, Payload: json.RawMessage(`{"a":1}`)},
		{PayloadBase64: "AQL/"},
		{Partition: &part, Payload: json.RawMessage(`"text"`)},
	})
	if err != nil || n != 3 {
		t.Fatalf("accepted %d, err %v", n, err)
	}
	f.expect(seen{Method: "POST", Path: "/v1/topics/orders/produce/batch", ContentType: "application/json",
		Body: `{"records":[{"key":"c1","payload":{"a":1}},{"payload_base64":"AQL/"},{"partition":2,"payload":"text"}]}`})
}

// A refused batch names the failing record in a structured field; the
// client carries it as APIError.Index. An answer without it (another
// route, an older server) has none, and a negative one is ignored.
func TestProduceBatchRefusalNamesTheIndex(t *testing.T) {
	for _, tc := range []struct {
		body  string
		index int
		named bool
	}{
		{`{"error":"record 3: payload is empty","index":3}`, 3, true},
		{`{"error":"record 0: payload is empty","index":0}`, 0, true},
		{`{"error":"topic \"orders\" does not exist"}`, 0, false},
		{`{"error":"odd","index":-1}`, 0, false},
	} {
		c, _ := newFake(t, reply{status: 400, body: tc.body})
		_, err := c.ProduceBatch(ctx, "orders", []BatchRecord{{PayloadBase64: "AQ=="}})
		i, named := RefusedIndex(err)
		if StatusOf(err) != 400 || named != tc.named || i != tc.index {
			t.Errorf("%s: status %d, index %d named %v", tc.body, StatusOf(err), i, named)
		}
	}
	if _, named := RefusedIndex(nil); named {
		t.Error("nil error names an index")
	}
}

// RecordFromBytes and Message.Bytes are inverses for every kind of payload,
// through what the server stores (a JSON string as its text, other JSON as
// its text, base64 as its bytes) and how it answers (docs/concepts.md,
// "Records": JSON verbatim, text flagged "text", other bytes "base64").
func TestRecordFromBytesRoundTrip(t *testing.T) {
	tests := []struct {
		in       []byte
		wantWire string
	}{
		{[]byte(`{"a":1}`), `{"payload":{"a":1}}`},
		{[]byte(`42`), `{"payload":42}`},
		{[]byte("hello \"world\""), `{"payload":"hello \"world\""}`},
		{[]byte(`"hi"`), `{"payload":"\"hi\""}`},
		{[]byte(`{"a": 1}`), `{"payload":"{\"a\": 1}"}`},
		{[]byte{}, `{"payload":""}`},
		{[]byte{1, 2, 0xff}, `{"payload_base64":"AQL/"}`},
	}
	for _, tt := range tests {
		rec := RecordFromBytes(tt.in)
		wire, _ := json.Marshal(rec)
		if string(wire) != tt.wantWire {
			t.Errorf("RecordFromBytes(%q) = %s, want %s", tt.in, wire, tt.wantWire)
		}
		back, err := serverAnswer(t, rec).Bytes()
		if err != nil || string(back) != string(tt.in) {
			t.Errorf("round trip of %q gave %q, %v", tt.in, back, err)
		}
	}
}

// serverAnswer is the message a server answers for rec, by the rules of
// docs/http-api.md and docs/concepts.md.
func serverAnswer(t *testing.T, rec BatchRecord) Message {
	t.Helper()
	var stored []byte
	switch {
	case rec.PayloadBase64 != "":
		b, err := base64.StdEncoding.DecodeString(rec.PayloadBase64)
		if err != nil {
			t.Fatal(err)
		}
		stored = b
	case len(rec.Payload) > 0 && rec.Payload[0] == '"':
		var s string
		if err := json.Unmarshal(rec.Payload, &s); err != nil {
			t.Fatal(err)
		}
		stored = []byte(s)
	default:
		stored = rec.Payload
	}
	switch {
	case !utf8.Valid(stored):
		s, _ := json.Marshal(base64.StdEncoding.EncodeToString(stored))
		return Message{Payload: s, PayloadEncoding: "base64"}
	case json.Valid(stored):
		return Message{Payload: stored}
	}
	s, _ := json.Marshal(string(stored))
	return Message{Payload: s, PayloadEncoding: "text"}
}

// WithKey sends a UTF-8 key as key and any other as key_base64.
func TestBatchRecordWithKey(t *testing.T) {
	for key, want := range map[string]string{"c1": `{"key":"c1","payload":1}`, "\xc3\x28": `{"key_base64":"wyg=","payload":1}`} {
		wire, _ := json.Marshal(BatchRecord{Payload: json.RawMessage(`1`), KeyBase64: "stale"}.WithKey([]byte(key)))
		if string(wire) != want {
			t.Errorf("WithKey(%q) = %s, want %s", key, wire, want)
		}
	}
}

// A batch record's JSON payload goes out byte for byte, whitespace and
// key order included: the node stores what it is sent and returns it
// verbatim, so the client must not compact it (json.Marshal would).
func TestProduceBatchSendsJSONPayloadsVerbatim(t *testing.T) {
	c, f := newFake(t, reply{status: 202, body: `{"accepted":2}`})
	key := "k<&>"
	if _, err := c.ProduceBatch(ctx, "orders", []BatchRecord{
		{Payload: json.RawMessage(`{"a": 1,   "b":[1, 2]}`)},
		{Key: &key, Payload: json.RawMessage("\t[ true ,null ]\n")},
	}); err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "POST", Path: "/v1/topics/orders/produce/batch", ContentType: "application/json",
		Body: `{"records":[{"payload":{"a": 1,   "b":[1, 2]}},{"key":"k<&>","payload":` + "\t[ true ,null ]\n" + `}]}`})
}

// A payload that is not JSON is refused before anything is sent.
func TestProduceBatchRefusesAPayloadThatIsNotJSON(t *testing.T) {
	c, f := newFake(t, reply{status: 202, body: `{"accepted":1}`})
	_, err := c.ProduceBatch(ctx, "orders", []BatchRecord{{PayloadBase64: "AQ=="}, {Payload: json.RawMessage(`{"a":`)}})
	if err == nil || !strings.Contains(err.Error(), "record 1") {
		t.Fatalf("got %v, want a refusal naming record 1", err)
	}
	f.expect()
}
