package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
)

// A single produce's Narad-Header-<Name> request headers become record
// headers, their names lower-cased; other request headers do not.
func TestSingleProduceReadsNaradHeaders(t *testing.T) {
	e := newEnv(t)
	w := e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: "x", header: map[string]string{
		"Narad-Header-Trace-Id": "t1", "narad-header-content.type": "text/plain", "X-Other": "no", "Narad-Headerx": "no",
	}})
	if w.Code != http.StatusAccepted {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	got := e.rec.last("Produce")
	for _, want := range []string{"{trace-id t1}", "{content.type text/plain}"} {
		if !strings.Contains(got, want) {
			t.Errorf("produced %s, want a header %s", got, want)
		}
	}
	if strings.Contains(got, "no") {
		t.Errorf("produced %s: a request header that is not Narad-Header-* became a record header", got)
	}
	w = e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: "y"})
	if got := e.rec.last("Produce"); w.Code != 202 || strings.Contains(got, "headers") {
		t.Errorf("a produce without headers: %d %s", w.Code, got)
	}
}

// Many headers: each name keeps its own value (names of every length, so
// a name cut at the wrong place would show).
func TestSingleProduceKeepsEachNameWithItsValue(t *testing.T) {
	e := newEnv(t)
	hdrs := map[string]string{}
	for i := 0; i < 40; i++ {
		hdrs["Narad-Header-"+strings.Repeat("N", i+1)] = fmt.Sprint(i + 1)
	}
	for round := 0; round < 5; round++ {
		if w := e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: "x", header: hdrs}); w.Code != 202 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		got := e.rec.last("Produce")
		for i := 0; i < 40; i++ {
			if want := fmt.Sprintf("{%s %d}", strings.Repeat("n", i+1), i+1); !strings.Contains(got, want) {
				t.Fatalf("produced %s, want %s", got, want)
			}
		}
	}
}

// The same header twice is refused, not joined (a value may hold commas).
func TestSingleProduceRefusesAHeaderGivenTwice(t *testing.T) {
	e := newEnv(t)
	req := httptest.NewRequest("POST", "/v1/topics/orders/produce", strings.NewReader("x"))
	req.Header.Add("Narad-Header-A", "1")
	req.Header.Add("Narad-Header-A", "2")
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, req)
	if w.Code != 400 || !strings.Contains(w.Body.String(), `invalid header \"a\": given twice`) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if got := e.rec.last("Produce"); got != "" {
		t.Fatalf("the refused produce reached the data plane: %s", got)
	}
}

// The header rules through a real broker: each refusal is a 400 naming
// the header (and, in a batch, the record), and nothing is stored.
func TestHeaderRulesRefuseThroughTheBroker(t *testing.T) {
	s := realBatchServer(t)
	single := func(name, value string) (int, string) {
		req := httptest.NewRequest("POST", "/v1/topics/orders/produce", strings.NewReader("x"))
		req.Header.Set(name, value)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	for _, c := range []struct{ name, value, says string }{
		{"Narad-Header-Narad-Dlq-Topic", "x", `invalid header \"narad-dlq-topic\": names beginning \"narad-\" are reserved for the broker`},
		{"Narad-Header-A!b", "x", `invalid header \"a!b\": names are lower-case [a-z0-9._-]`},
		{"Narad-Header-" + strings.Repeat("n", 129), "x", "name of 129 bytes, at most 128"},
		{"Narad-Header-Big", strings.Repeat("v", header.MaxValue+1), `invalid header \"big\": value of 4097 bytes, at most 4096`},
		{"Narad-Header-Bin", "\xff", `invalid header \"bin\": value is not valid UTF-8`},
	} {
		if code, body := single(c.name, c.value); code != 400 || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s, want 400 saying %s", c.name, code, body, c.says)
		}
	}
	if code, body := single("Narad-Header-Ok", "fine"); code != 202 {
		t.Fatalf("a valid header: %d %s", code, body)
	}

	batch := func(body string) (int, string) {
		req := httptest.NewRequest("POST", "/v1/topics/orders/produce/batch", strings.NewReader(body))
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	four := strings.Repeat("v", header.MaxValue)
	var over strings.Builder // 16 KiB + of names and values, each within its caps
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&over, `"h%d":"%s",`, i, four)
	}
	for _, c := range []struct{ body, says string }{
		{`{"records":[{"payload":1},{"payload":1,"headers":{"narad-x":"v"}}]}`, `record 1: invalid header \"narad-x\": names beginning`},
		{`{"records":[{"payload":1,"headers":{"":"v"}}]}`, `record 0: invalid header: empty name`},
		{`{"records":[{"payload":1,"headers":{"Up":"v"}}]}`, `record 0: invalid header \"Up\"`},
		{`{"records":[{"payload":1,"headers":{` + over.String() + `"z":"v"}}]}`, `record 0: invalid header \"h3\": headers reach 16392 bytes (names and values), at most 16384 per record`},
		{`{"records":[{"payload":1,"headers":{` + strings.TrimSuffix(manyHeaders(65), ",") + `}}]}`, `record 0: invalid header: 65 headers, at most 64 per record`},
	} {
		code, body := batch(c.body)
		if code != 400 || !strings.Contains(body, c.says) || !strings.Contains(body, `"index":`) {
			t.Errorf("batch: %d %s, want 400 with an index saying %s", code, body, c.says)
		}
	}
	if code, body := batch(`{"records":[{"payload":1,"headers":{"a":"b","trace":"x"}}]}`); code != 202 {
		t.Fatalf("a valid batch: %d %s", code, body)
	}
}

// Consume and replay show "headers" when a record has some, and no field
// at all when it has none.
func TestConsumeShowsHeaders(t *testing.T) {
	e := newEnv(t)
	e.plane.msgs = []broker.Message{
		{Topic: "orders", Partition: 0, Offset: 1, Payload: []byte("a"), Headers: []header.Header{{Name: "a", Value: "\"q\"\n"}, {Name: "trace-id", Value: "é\u2028"}}},
		{Topic: "orders", Partition: 0, Offset: 2, Payload: []byte("b")},
	}
	w := e.do(request{method: "GET", target: "/v1/topics/orders/consume?partition=0&offset=1&max=2"})
	if w.Code != 200 || !json.Valid(w.Body.Bytes()) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if !bytes.Contains(w.Body.Bytes(), []byte(`,"headers":{"a":"\"q\"\n","trace-id":"é\u2028"}}`)) {
		t.Errorf("answer %s does not end the first message with its headers", w.Body)
	}
	var m struct {
		Messages []struct {
			Headers map[string]string `json:"headers"`
		} `json:"messages"`
	}
	decode(t, w, &m)
	if m.Messages[0].Headers["trace-id"] != "é\u2028" || m.Messages[1].Headers != nil {
		t.Errorf("decoded %+v", m.Messages)
	}
	if n := bytes.Count(w.Body.Bytes(), []byte(`"headers"`)); n != 1 {
		t.Errorf("%d headers fields for one record with headers: %s", n, w.Body)
	}
}

// The broker's way to produce records with reserved (narad-) headers is
// not one the edge can call: no interface the handlers hold names it.
func TestTheEdgeCannotProduceReservedHeaders(t *testing.T) {
	for _, iface := range []reflect.Type{reflect.TypeFor[Messages](), reflect.TypeFor[DataPlane]()} {
		if _, ok := iface.MethodByName("ProduceReserved"); ok {
			t.Errorf("%v names ProduceReserved: a client could set narad- headers", iface)
		}
	}
}
