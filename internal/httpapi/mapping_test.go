package httpapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/refusal"
)

// The refusals the packages behind the API make reach the client with the
// status of docs/http-api.md, the JSON error shape and the package's own
// sentence: typed refusals through apierr.From, apierr values as they are,
// a 503 with its Retry-After (rounded up to whole seconds, at least 1).
func TestRoomRefusalsGetTheirStatus(t *testing.T) {
	cases := []struct {
		op, method, target, body string
		err                      error
		want                     int
		retryAfter               string
	}{
		{"DescribeTopic", "GET", "/v1/topics/orders", "", refusal.New(refusal.ErrTopicNotFound, 0, `topic "orders" does not exist`), 404, ""},
		{"Produce", "POST", "/v1/topics/orders/produce", "x", refusal.New(refusal.ErrTopicNotFound, 0, `topic "orders" does not exist here: it is a remote child of "p"`), 404, ""},
		{"Produce", "POST", "/v1/topics/orders/produce?partition=9", "x", refusal.New(refusal.ErrPartitionRange, 0, `partition 9 is out of range: "orders" has 3 partitions`), 400, ""},
		{"Produce", "POST", "/v1/topics/orders/produce", "x", apierr.Conflict(`"orders" is a delay child of "p": it receives only delayed copies, produce to the parent`), 409, ""},
		{"Produce", "POST", "/v1/topics/orders/produce", "x", apierr.BadRequest(`payload does not match the schema of "orders"`), 400, ""},
		{"Produce", "POST", "/v1/topics/orders/produce", "x", refusal.New(refusal.ErrDiskFull, 5*time.Second, "this node's disk is full: nothing was stored"), 503, "5"},
		{"Produce", "POST", "/v1/topics/orders/produce", "x", refusal.New(refusal.ErrFenced, 0, "this node's ingress log is re-reading its last segment"), 503, "1"},
		{"ProduceBatch", "POST", "/v1/topics/orders/produce/batch", `{"records":[{"payload":1}]}`, refusal.New(refusal.ErrPartitionRange, 0, "record 0: partition 7 is out of range"), 400, ""},
		{"ProduceBatch", "POST", "/v1/topics/orders/produce/batch", `{"records":[{"payload":1}]}`, apierr.TooLarge("record 0: payload of 2000000 bytes is over the 1 MiB cap"), 413, ""},
		{"Consume", "GET", "/v1/topics/orders/consume?partition=1", "", refusal.New(refusal.ErrNotOwner, time.Second, `partition 1 of "orders" is not served by this node`), 503, "1"},
		{"Consume", "GET", "/v1/topics/orders/consume?partition=5", "", refusal.New(refusal.ErrPartitionRange, 0, `partition 5 is out of range`), 400, ""},
		{"Ack", "POST", "/v1/topics/orders/ack?receipt_handle=0:3:9", "", apierr.Gone("the lease of 0:3:9 lapsed or was superseded"), 410, ""},
		{"Ack", "POST", "/v1/topics/orders/ack?receipt_handle=0:3:9&extend=true", "", apierr.Gone("the lease of 0:3:9 lapsed"), 410, ""},
		{"Ack", "POST", "/v1/topics/orders/ack?receipt_handle=0:3:9&extend=0", "", apierr.Gone("the lease of 0:3:9 lapsed"), 410, ""},
		{"Ack", "POST", "/v1/topics/orders/ack?receipt_handle=zz", "", apierr.BadRequest(`receipt_handle "zz": malformed`), 400, ""},
		{"Ack", "POST", "/v1/topics/orders/ack?receipt_handle=0:3:9", "", apierr.Unavailable(1500*time.Millisecond, "too many acks above the frontier"), 503, "2"},
		{"AckBatch", "POST", "/v1/topics/orders/ack", `{"receipt_handles":[]}`, apierr.BadRequest("receipt_handles is empty"), 400, ""},
		{"CreateTopic", "POST", "/v1/topics", `{"name":"orders"}`, apierr.Conflict(`topic "orders" already exists`), 409, ""},
		{"CreateTopic", "POST", "/v1/topics", `{"name":"orders","partitions":500}`, apierr.BadRequest("partitions must be 1..108, got 500"), 400, ""},
		{"CreateTopic", "POST", "/v1/topics", `{"name":"orders"}`, refusal.New(refusal.ErrDiskFull, 5*time.Second, "this node's disk is full: topic create is refused"), 503, "5"},
		{"AlterTopic", "PATCH", "/v1/topics/orders", `{"retention_ms":5}`, apierr.BadRequest("retention_ms must be 0 (keep forever) or at least 3600000, got 5"), 400, ""},
		{"AlterTopic", "PATCH", "/v1/topics/orders", `{"retention_ms":3600000}`, apierr.Conflict("retention_ms 3600000 is below 7200000, the floor of delay child"), 409, ""},
		{"DeleteTopic", "DELETE", "/v1/topics/orders", "", refusal.New(refusal.ErrTopicNotFound, 0, `topic "orders" does not exist`), 404, ""},
		{"Attach", "POST", "/v1/topics/orders/children", `{"child":"c"}`, refusal.New(refusal.ErrConflict, 0, `"c" is already attached to "x"`), 409, ""},
		{"Attach", "POST", "/v1/topics/orders/children", `{"child":"c"}`, refusal.New(refusal.ErrInvalid, 0, `a topic cannot be its own child: "c" attached to itself`), 400, ""},
		{"Attach", "POST", "/v1/topics/orders/children", `{"child":"c"}`, refusal.New(refusal.ErrUnavailable, time.Second, `partition 0 of "orders" has no owner yet`), 503, "1"},
		{"Attach", "POST", "/v1/topics/orders/children", `{"child":"c"}`, refusal.New(refusal.ErrTopicNotFound, 0, `child topic "c" does not exist`), 404, ""},
		{"Children", "GET", "/v1/topics/orders/children", "", refusal.New(refusal.ErrTopicNotFound, 0, `topic "orders" does not exist`), 404, ""},
		{"Detach", "DELETE", "/v1/topics/orders/children/c", "", refusal.New(refusal.ErrNotFound, 0, `"c" is not a child of "orders"`), 404, ""},
		{"GetUser", "GET", "/v1/users/nobody", "", apierr.NotFound(`user "nobody" does not exist`), 404, ""},
		{"SetDraining", "POST", "/v1/cluster/members/n9/decommission", "", apierr.NotFound(`member "n9" does not exist`), 404, ""},
	}
	for _, c := range cases {
		t.Run(c.op+" "+c.target, func(t *testing.T) {
			e := newEnv(t)
			e.rec.failWith(c.op, c.err)
			w := e.do(request{method: c.method, target: c.target, body: c.body})
			if w.Code != c.want {
				t.Fatalf("%s answered %d %q, want %d", c.op, w.Code, w.Body.String(), c.want)
			}
			if e.rec.count(c.op) == 0 {
				t.Fatalf("%s was never asked", c.op)
			}
			if msg := errorBody(t, w); msg != c.err.Error() {
				t.Errorf("error %q, want the room's own sentence %q", msg, c.err.Error())
			}
			if got := w.Header().Get("Retry-After"); got != c.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, c.retryAfter)
			}
		})
	}
}

// Every refusal kind reaches the client as apierr.From's table (the API's
// one, whose lines its own test holds) says: that status, the refusal's
// sentence, and for a temporary one its Retry-After. No kind falls
// through to a 500.
func TestEveryRefusalKindIsAnswered(t *testing.T) {
	for _, k := range refusal.Kinds() {
		err := refusal.New(k, 3*time.Second, "refused as %s", k)
		want, ok := apierr.From(err)
		if !ok {
			t.Fatalf("kind %s has no status in apierr.From's table", k)
		}
		e := newEnv(t)
		e.rec.failWith("Attach", err)
		w := e.do(request{method: "POST", target: "/v1/topics/orders/children", body: `{"child":"c"}`})
		if w.Code != want.Status || w.Code == http.StatusInternalServerError {
			t.Errorf("%s answered %d %q, want %d", k, w.Code, w.Body.String(), want.Status)
		}
		if msg := errorBody(t, w); msg != "refused as "+string(k) {
			t.Errorf("%s: error %q", k, msg)
		}
		wantRetry := ""
		if want.Status == http.StatusServiceUnavailable {
			wantRetry = "3"
		}
		if got := w.Header().Get("Retry-After"); got != wantRetry {
			t.Errorf("%s: Retry-After %q, want %q", k, got, wantRetry)
		}
	}
}

// An error that is neither an apierr nor a typed refusal is an internal
// failure: 500 with a sentence that tells the client nothing of it, the
// detail in the node's log. A sentence that names a file under the data
// directory is scrubbed.
func TestInternalFailuresAndPathsStayOnTheServer(t *testing.T) {
	e := newEnv(t)
	e.rec.failWith("Produce", errors.New("write /srv/narad/data/ingress/00000001.wal: input/output error"))
	w := e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: "x"})
	if msg := errorBody(t, w); w.Code != http.StatusInternalServerError || msg != "internal error" {
		t.Fatalf("internal failure answered %d %q", w.Code, msg)
	}
	if !strings.Contains(e.logs.String(), "00000001.wal") {
		t.Fatalf("the cause was not logged: %s", e.logs)
	}

	e.s.diskRoots = diskRoots("/srv/narad/data")
	e.rec.failWith("Consume", refusal.New(refusal.ErrFenced, 0, "partition 0 of \"orders\" cannot commit now: open /srv/narad/data/topics/orders/p00000/hwm: no space"))
	w = e.do(request{method: "GET", target: "/v1/topics/orders/consume"})
	msg := errorBody(t, w)
	if w.Code != http.StatusServiceUnavailable || strings.Contains(msg, "/srv/narad") || !strings.Contains(msg, "(a file in the data directory)") {
		t.Fatalf("a sentence naming a data file answered %d %q", w.Code, msg)
	}
}

// A batch ack answers 200 with one result per handle, in place, each with
// the status the single form would have answered.
func TestBatchAckResultsKeepTheSingleFormsStatus(t *testing.T) {
	e := newEnv(t)
	e.plane.ackErrs["0:1:5"] = apierr.Gone("the lease of 0:1:5 lapsed or was superseded")
	e.plane.ackErrs["1:2:6"] = refusal.New(refusal.ErrNotOwner, time.Second, `partition 1 of "orders" is not served by this node`)
	e.plane.ackErrs["bad"] = apierr.BadRequest(`receipt_handle "bad": malformed`)
	w := e.do(request{method: "POST", target: "/v1/topics/orders/ack", body: `{"receipt_handles":["0:0:4","0:1:5","1:2:6","bad"]}`})
	if w.Code != http.StatusOK {
		t.Fatalf("batch ack: %d %q", w.Code, w.Body.String())
	}
	var got struct{ Results []AckResult }
	decode(t, w, &got)
	want := []AckResult{
		{ReceiptHandle: "0:0:4", Status: 204},
		{ReceiptHandle: "0:1:5", Status: 410, Error: "the lease of 0:1:5 lapsed or was superseded"},
		{ReceiptHandle: "1:2:6", Status: 503, Error: `partition 1 of "orders" is not served by this node`},
		{ReceiptHandle: "bad", Status: 400, Error: `receipt_handle "bad": malformed`},
	}
	if len(got.Results) != len(want) {
		t.Fatalf("results %+v", got.Results)
	}
	for i := range want {
		if got.Results[i] != want[i] {
			t.Errorf("result %d: %+v, want %+v", i, got.Results[i], want[i])
		}
	}
}
