package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
)

// Each route reaches the one operation it names behind the API, with what
// the request said, and answers with the status of docs/http-api.md.
func TestRoutesReachTheirOperation(t *testing.T) {
	cases := []struct {
		req  request
		want int
		call string // the fake's record of the call
	}{
		{request{method: "POST", target: "/v1/topics", body: `{"name":"orders","partitions":6}`}, 201, "CreateTopic orders partitions=6 owner="},
		{request{method: "POST", target: "/v1/topics", body: `{"name":"orders-an","parent":"orders"}`}, 201, "CreateChild orders-an parent=orders owner="},
		{request{method: "GET", target: "/v1/topics"}, 200, `ListTopics limit=0 token=""`},
		{request{method: "GET", target: "/v1/topics?limit=5&page_token=m"}, 200, `ListTopics limit=5 token="m"`},
		{request{method: "GET", target: "/v1/topics?limit=1000"}, 200, `ListTopics limit=1000 token=""`},
		{request{method: "GET", target: "/v1/topics?limit=1001"}, 200, `ListTopics limit=1000 token=""`},
		{request{method: "GET", target: "/v1/topics/orders"}, 200, "DescribeTopic orders"},
		{request{method: "PATCH", target: "/v1/topics/orders", body: `{"retention_ms":0}`}, 200, "AlterTopic orders retention_ms=0"},
		{request{method: "DELETE", target: "/v1/topics/orders"}, 204, "DeleteTopic orders"},
		{request{method: "POST", target: "/v1/topics/orders/produce", body: "hello"}, 202, `Produce orders key="" p=- payload="hello"`},
		{request{method: "POST", target: "/v1/topics/orders/produce?key=c42&partition=2", body: `{"id":1}`}, 202, `Produce orders key="c42" p=2 payload="{\"id\":1}"`},
		{request{method: "GET", target: "/v1/topics/orders/consume"}, 204, "Consume orders max=0 wait=0s"},
		{request{method: "GET", target: "/v1/topics/orders/consume?wait=500ms&max=10"}, 204, "Consume orders max=10 wait=500ms"},
		{request{method: "GET", target: "/v1/topics/orders/consume?wait=250"}, 204, "Consume orders max=0 wait=250ms"},
		{request{method: "GET", target: "/v1/topics/orders/consume?visibility=45s"}, 204, "Consume orders max=0 wait=0s visibility=45s"},
		{request{method: "GET", target: "/v1/topics/orders/consume?max=5&visibility=1"}, 204, "Consume orders max=5 wait=0s visibility=1ms"},
		{request{method: "GET", target: "/v1/topics/orders/consume?visibility=43200000"}, 204, "Consume orders max=0 wait=0s visibility=12h0m0s"},
		{request{method: "GET", target: "/v1/topics/orders/consume?partition=2&offset=40&max=3"}, 204, "Consume orders p=2 offset=40 max=3 wait=0s"},
		{request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=2:0:861651"}, 204, "Ack orders 2:0:861651 op=0"},
		{request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=2:0:861651&extend=true"}, 204, "Ack orders 2:0:861651 op=1"},
		{request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=2:0:861651&extend=0"}, 204, "Ack orders 2:0:861651 op=2"},
		{request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=2:0:861651&extend=0s"}, 204, "Ack orders 2:0:861651 op=2"},
		{request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=2:0:861651&extend=0ms"}, 204, "Ack orders 2:0:861651 op=2"},
		{request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=2:0:861651&extend=45s"}, 204, "ExtendFor orders 2:0:861651 d=45s"},
		{request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=2:0:861651&extend=2m"}, 204, "ExtendFor orders 2:0:861651 d=2m0s"},
		{request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=2:0:861651&extend=1"}, 204, "ExtendFor orders 2:0:861651 d=1ms"},
		{request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=2:0:861651&extend=43200000"}, 204, "ExtendFor orders 2:0:861651 d=12h0m0s"},
		{request{method: "POST", target: "/v1/topics/orders/ack", body: `{"receipt_handles":["2:0:8","1:4:9"]}`}, 200, "AckBatch orders [2:0:8 1:4:9]"},
		{request{method: "GET", target: "/v1/topics/orders/stats/history"}, 200, "DescribeTopic orders"},
		{request{method: "GET", target: "/v1/topics/orders/children"}, 200, "Children orders"},
		{request{method: "POST", target: "/v1/topics/orders/children", body: `{"child":"orders-retry","delay_ms":3600000}`}, 200, "Attach orders child=orders-retry delay=3600000"},
		{request{method: "DELETE", target: "/v1/topics/orders/children/orders-retry"}, 204, "Detach orders orders-retry"},
		{request{method: "POST", target: "/v1/users", body: `{"username":"billing","password":"s3cret-pw"}`}, 201, "CreateUser billing by= limits=none"},
		{request{method: "POST", target: "/v1/users", body: `{"username":"billing","password":"s3cret-pw","limits":{"produce_records_per_s":5,"consume_requests_per_s":null}}`}, 201,
			"CreateUser billing by= limits=produce_records_per_s=5"},
		{request{method: "PATCH", target: "/v1/users/billing", body: `{"limits":{"produce_bytes_per_s":1048576,"consume_requests_per_s":null}}`}, 200,
			"PatchLimits billing by= reset=false produce_bytes_per_s=1048576,consume_requests_per_s=null"},
		{request{method: "PATCH", target: "/v1/users/billing", body: `{"limits":null}`}, 200, "PatchLimits billing by= reset=true "},
		{request{method: "GET", target: "/v1/users"}, 200, "ListUsers by="},
		{request{method: "GET", target: "/v1/users/billing"}, 200, "GetUser billing by="},
		{request{method: "PUT", target: "/v1/users/billing/grants", body: `{"grants":[]}`}, 200, "SetGrants billing by= n=0"},
		{request{method: "PUT", target: "/v1/users/billing/password", body: `{"password":"n3w-secret"}`}, 204, "SetPassword billing by="},
		{request{method: "DELETE", target: "/v1/users/billing"}, 204, "DeleteUser billing by="},
		{request{method: "GET", target: "/v1/cluster/members"}, 200, "Members"},
		{request{method: "GET", target: "/v1/cluster/moves"}, 200, "Moves"},
		{request{method: "POST", target: "/v1/cluster/members/n3/decommission"}, 200, "SetDraining n3 true"},
		{request{method: "DELETE", target: "/v1/cluster/members/n3/decommission"}, 200, "SetDraining n3 false"},
	}
	for _, c := range cases {
		t.Run(c.req.method+" "+c.req.target, func(t *testing.T) {
			e := newEnv(t)
			w := e.do(c.req)
			if w.Code != c.want {
				t.Fatalf("%d %q, want %d", w.Code, w.Body.String(), c.want)
			}
			op, _, _ := strings.Cut(c.call, " ")
			if got := e.rec.last(op); got != c.call {
				t.Fatalf("the rooms saw %q, want %q (all calls: %v)", got, c.call, e.rec.calls)
			}
			switch {
			case w.Code == http.StatusNoContent:
				if w.Body.Len() != 0 {
					t.Errorf("%d with a body %q", w.Code, w.Body.String())
				}
			default:
				var v any
				if w.Header().Get("Content-Type") != "application/json" || json.Unmarshal(w.Body.Bytes(), &v) != nil {
					t.Errorf("answer %d is not JSON: %q", w.Code, w.Body.String())
				}
			}
		})
	}
}

// The authenticated user is the topic's owner at create, and the actor of
// a users request.
func TestTheAuthenticatedUserIsTheActor(t *testing.T) {
	e := newEnv(t, secured)
	if w := e.do(request{method: "POST", target: "/v1/topics", body: `{"name":"a"}`, user: "alice"}); w.Code != 201 {
		t.Fatalf("create: %d %q", w.Code, w.Body.String())
	}
	if got := e.rec.last("CreateTopic"); got != "CreateTopic a partitions=0 owner=alice" {
		t.Fatalf("created as %q", got)
	}
	if w := e.do(request{method: "PATCH", target: "/v1/topics/mine", body: `{"retention_ms":0}`, user: "alice"}); w.Code != 200 {
		t.Fatalf("the owner's alter: %d %q", w.Code, w.Body.String())
	}
	if w := e.do(request{method: "DELETE", target: "/v1/topics/mine", user: "root"}); w.Code != 204 {
		t.Fatalf("an admin's delete: %d %q", w.Code, w.Body.String())
	}
	if w := e.do(request{method: "GET", target: "/v1/users/alice", user: "alice"}); w.Code != 200 || e.rec.last("GetUser") != "GetUser alice by=alice" {
		t.Fatalf("get self: %d, %q", w.Code, e.rec.last("GetUser"))
	}
}

// A batch body decodes by the payload rules of docs/http-api.md — a JSON
// string is stored as its text, any other JSON value as its JSON text,
// payload_base64 as the bytes, key_base64 as the key's bytes — in the
// JSON envelope and in NDJSON.
func TestBatchProduceDecodesEveryForm(t *testing.T) {
	body := `{"records":[{"key":"c1","payload":{"id": 1}},{"key_base64":"wyg=","payload_base64":"AQL/"},` +
		`{"partition":2,"payload":"plain text"},{"payload":"esc\"aped"},{"payload":17}]}`
	want := `ProduceBatch orders [key="c1" p=- payload="{\"id\": 1}" key="\xc3(" p=- payload="\x01\x02\xff" ` +
		`key="" p=2 payload="plain text" key="" p=- payload="esc\"aped" key="" p=- payload="17"]`
	ndjson := strings.Join([]string{`{"key":"c1","payload":{"id": 1}}`, `{"key_base64":"wyg=","payload_base64":"AQL/"}`,
		``, `{"partition":2,"payload":"plain text"}`, `{"payload":"esc\"aped"}`, `{"payload":17}`}, "\n")
	for name, r := range map[string]request{
		"envelope": {method: "POST", target: "/v1/topics/orders/produce/batch", body: body},
		"ndjson": {method: "POST", target: "/v1/topics/orders/produce/batch", body: ndjson,
			header: map[string]string{"Content-Type": "application/x-ndjson"}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			w := e.do(r)
			var got struct{ Accepted int }
			if decode(t, w, &got); w.Code != 202 || got.Accepted != 5 {
				t.Fatalf("%d %q", w.Code, w.Body.String())
			}
			if c := e.rec.last("ProduceBatch"); c != want {
				t.Fatalf("produced\n %s\nwant\n %s", c, want)
			}
		})
	}
}

// A batch whose record i fails to decode asks the data plane to check the
// records before it (a refusal must name the first failing index, and an
// earlier one may fail a check only the data plane makes), and produces
// nothing.
func TestBatchNamesTheFirstFailingIndex(t *testing.T) {
	e := newEnv(t)
	e.rec.failWith("CheckBatch", errFirst)
	w := e.do(request{method: "POST", target: "/v1/topics/orders/produce/batch",
		body: `{"records":[{"payload":1},{"payload":2},{"payload":3,"bad":1}]}`})
	if msg := errorBody(t, w); w.Code != 400 || msg != errFirst.Error() {
		t.Fatalf("%d %q, want the data plane's refusal of record 0", w.Code, msg)
	}
	if c := e.rec.last("CheckBatch"); c != "CheckBatch orders 2" {
		t.Fatalf("checked %q, want the two records before the failing one", c)
	}
	if m := e.rec.mutations(); len(m) != 0 {
		t.Fatalf("produced: %v", m)
	}
}

var errFirst = broker.ValidateTopicName("") // any 400 the data plane words

// Produce answers the record's message id and partition; a batch its
// count and the ids in request order (docs/http-api.md).
func TestProduceAnswersIDs(t *testing.T) {
	e := newEnv(t)
	w := e.do(request{method: "POST", target: "/v1/topics/orders/produce?partition=2", body: "x"})
	if w.Code != 202 || strings.TrimSpace(w.Body.String()) != `{"id":"fake-0","partition":2}` || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("single produce: %d %q %q", w.Code, w.Body.String(), w.Header().Get("Content-Type"))
	}
	w = e.do(request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},{"payload":2},{"payload":3}]}`})
	if w.Code != 202 || strings.TrimSpace(w.Body.String()) != `{"accepted":3,"ids":["fake-0","fake-1","fake-2"]}` {
		t.Fatalf("batch produce: %d %q", w.Code, w.Body.String())
	}
	// A record the data plane could not name is null; none named: no ids.
	if got := string(appendBatchAnswer(nil, []broker.Accepted{{ID: "p1"}, {}})); got != `{"accepted":2,"ids":["p1",null]}`+"\n" {
		t.Fatalf("one unnamed: %q", got)
	}
	if got := string(appendBatchAnswer(nil, []broker.Accepted{{}, {}})); got != `{"accepted":2}`+"\n" {
		t.Fatalf("none named: %q", got)
	}
}

// A delivered record comes back by the payload rules: JSON verbatim, text
// as a JSON string flagged "text", anything else base64 and flagged; the key only when
// there is one; the commit time in seconds and in milliseconds; the message id. One record is an object, max
// gives {"messages": [...]}.
func TestConsumeAnswersByThePayloadRules(t *testing.T) {
	e := newEnv(t)
	e.plane.msgs = []broker.Message{
		{Topic: "orders", Partition: 2, Offset: 0, Key: []byte("customer-42"), Payload: []byte(`{"order_id":"ord_123"}`),
			CommittedAt: 1783615560_123, ReceiptHandle: "2:0:861651", DeliveryCount: 1, ID: "w00000000000000000000000001"},
		{Topic: "orders", Partition: 1, Offset: 7, Payload: []byte("plain text"), CommittedAt: 1000, ReceiptHandle: "1:7:5", DeliveryCount: 2},
		{Topic: "orders", Partition: 1, Offset: 8, Payload: []byte{0xff, 0x00}, CommittedAt: 2000},
	}
	w := e.do(request{method: "GET", target: "/v1/topics/orders/consume"})
	want := `{"topic":"orders","partition":2,"offset":0,"id":"w00000000000000000000000001","key":"customer-42","payload":{"order_id":"ord_123"},` +
		`"timestamp":1783615560,"timestamp_ms":1783615560123,"receipt_handle":"2:0:861651","delivery_count":1}`
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != want {
		t.Fatalf("one record: %d\n %s\nwant\n %s", w.Code, w.Body.String(), want)
	}
	w = e.do(request{method: "GET", target: "/v1/topics/orders/consume?max=3"})
	var got struct{ Messages []map[string]any }
	decode(t, w, &got)
	if len(got.Messages) != 3 {
		t.Fatalf("max=3: %s", w.Body.String())
	}
	if m := got.Messages[1]; m["payload"] != "plain text" || m["key"] != nil || m["payload_encoding"] != "text" {
		t.Errorf("text record: %v", m)
	}
	if m := got.Messages[2]; m["payload"] != "/wA=" || m["payload_encoding"] != "base64" || m["receipt_handle"] != nil {
		t.Errorf("binary replayed record: %v", m)
	}
}

// /healthz, /readyz and /metrics need no credentials even with security
// on, and touch nothing.
func TestOperationsEndpointsNeedNoCredentials(t *testing.T) {
	e := newEnv(t, secured)
	for _, target := range []string{"/healthz", "/readyz", "/metrics"} {
		if w := e.do(request{method: "GET", target: target}); w.Code != 200 {
			t.Errorf("%s: %d %q", target, w.Code, w.Body.String())
		}
	}
	if len(e.rec.calls) != 0 {
		t.Fatalf("operations endpoints reached the rooms: %v", e.rec.calls)
	}
}

// The long-poll budget of a forwarded consume is node RPC's default plus
// the wait the data plane grants (its cap), so an owner that does not
// answer costs a 503 well before the HTTP write timeout.
func TestForwardBudgetIsTheDefaultPlusTheGrantedWait(t *testing.T) {
	e := newEnv(t)
	for wait, want := range map[time.Duration]time.Duration{0: 5 * time.Second, 3 * time.Second: 8 * time.Second, time.Hour: 15 * time.Second} {
		if got := e.s.dataPlaneTimeout(wait); got != want {
			t.Errorf("wait %v: budget %v, want %v", wait, got, want)
		}
	}
}

// A batch ack words each handle's outcome as the single form's error body
// would: a refusal's own sentence, and for an internal failure a generic
// 500 whose detail stays in the log.
func TestBatchAckWordsEachOutcome(t *testing.T) {
	e := newEnv(t)
	e.plane.ackErrs["0:1:2"] = apierr.Gone("receipt_handle 0:1:2: already settled")
	e.plane.ackErrs["0:2:3"] = errors.New("storage: open orders/0/frontier: input/output error")
	w := e.do(request{method: "POST", target: "/v1/topics/orders/ack", body: `{"receipt_handles":["0:0:1","0:1:2","0:2:3"]}`})
	var got struct{ Results []AckResult }
	if decode(t, w, &got); w.Code != 200 || len(got.Results) != 3 {
		t.Fatalf("%d %q", w.Code, w.Body.String())
	}
	want := []AckResult{{"0:0:1", 204, ""}, {"0:1:2", 410, "receipt_handle 0:1:2: already settled"}, {"0:2:3", 500, "internal error"}}
	for i := range want {
		if got.Results[i] != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, got.Results[i], want[i])
		}
	}
	if !strings.Contains(e.logs.String(), "input/output error") {
		t.Errorf("the internal failure is not in the log: %q", e.logs.String())
	}
}
