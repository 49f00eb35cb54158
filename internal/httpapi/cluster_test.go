package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
)

// A metadata write on a node that does not lead is replayed on the leader
// — same method, path, query, body and user — and its answer is written
// as the leader gave it; a 2xx waits until this replica has the change
// (read-your-writes). Nothing runs here.
func TestMetadataWritesGoToTheLeader(t *testing.T) {
	e := newEnv(t, clustered)
	e.cl.leader = false
	e.cl.answers[""] = ForwardResponse{Status: 201, ContentType: "application/json", Body: []byte(`{"name":"orders"}`), MetaVersion: 57}
	w := e.do(request{method: "POST", target: "/v1/topics", body: `{"name":"orders"}`})
	if w.Code != 201 || w.Body.String() != `{"name":"orders"}` || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("forwarded create answered %d %q", w.Code, w.Body.String())
	}
	if got := e.rec.last("Forward"); got != "Forward  POST /v1/topics? user= timeout=1m15s" {
		t.Fatalf("forwarded as %q", got)
	}
	if body := string(e.cl.sent[0].Body); body != `{"name":"orders"}` {
		t.Fatalf("forwarded body %q", body)
	}
	if got := e.rec.last("WaitMetaVersion"); got != "WaitMetaVersion after=56 within=2s" {
		t.Fatalf("read-your-writes wait: %q", got)
	}
	if e.rec.count("CreateTopic") != 0 {
		t.Fatal("created locally too")
	}

	// The leader's refusal reaches the client as it is, Retry-After and all,
	// and a refusal is not waited for.
	e.cl.answers[""] = ForwardResponse{Status: 503, ContentType: "application/json", Body: []byte(`{"error":"no quorum"}`), RetryAfter: 3 * time.Second}
	w = e.do(request{method: "DELETE", target: "/v1/topics/orders"})
	if w.Code != 503 || w.Header().Get("Retry-After") != "3" || errorBody(t, w) != "no quorum" {
		t.Fatalf("forwarded refusal: %d %q Retry-After %q", w.Code, w.Body.String(), w.Header().Get("Retry-After"))
	}
	if e.rec.count("WaitMetaVersion") != 1 {
		t.Fatal("waited for a change the leader refused")
	}
}

// A request forwarded here already is never forwarded again: a node that
// lost the leadership meanwhile says so (503, retry), and a partition that
// moved meanwhile is a 503 too — no loops.
func TestForwardedRequestsAreNotForwardedAgain(t *testing.T) {
	e := newEnv(t, clustered)
	e.cl.leader = false
	e.cl.owners["orders/1"] = "n2"
	for _, c := range []struct {
		method, target, body, says string
	}{
		{"POST", "/v1/topics", `{"name":"x"}`, "not the leader any more"},
		{"GET", "/v1/topics/orders/consume?partition=1", "", `partition 1 of "orders" moved`},
		{"POST", "/v1/topics/orders/ack?receipt_handle=1:4:9", "", `partition 1 of "orders" moved`},
	} {
		r := httptest.NewRequestWithContext(Forwarded(context.Background(), "alice"), c.method, c.target, strings.NewReader(c.body))
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, r)
		if msg := errorBody(t, w); w.Code != 503 || !strings.Contains(msg, c.says) || w.Header().Get("Retry-After") != "1" {
			t.Errorf("%s %s forwarded here: %d %q", c.method, c.target, w.Code, msg)
		}
	}
	if m := e.rec.mutations(); len(m) != 0 {
		t.Fatalf("a forwarded request went on: %v", m)
	}
}

// A consume, replay or ack about a partition another node owns is served
// by that owner within node RPC's default plus the granted wait; an owner
// that does not answer is the client's 503 with Retry-After, and becomes a
// suspect.
func TestPartitionRequestsGoToTheOwner(t *testing.T) {
	e := newEnv(t, clustered)
	e.cl.owners["orders/1"] = "n2"
	e.cl.answers["n2"] = ForwardResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"offset":3}`)}
	w := e.do(request{method: "GET", target: "/v1/topics/orders/consume?partition=1&wait=2s"})
	if w.Code != 200 || w.Body.String() != `{"offset":3}` {
		t.Fatalf("forwarded consume: %d %q", w.Code, w.Body.String())
	}
	if got := e.rec.last("Forward"); got != "Forward n2 GET /v1/topics/orders/consume?partition=1&wait=2s user= timeout=7s" {
		t.Fatalf("forwarded as %q", got)
	}
	w = e.do(request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=1:4:9&extend=true"})
	if got := e.rec.last("Forward"); w.Code != 200 || got != "Forward n2 POST /v1/topics/orders/ack?receipt_handle=1:4:9&extend=true user= timeout=5s" {
		t.Fatalf("forwarded ack: %d, %q", w.Code, got)
	}
	w = e.do(request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=1:4:9&extend=45s"})
	if got := e.rec.last("Forward"); w.Code != 200 || got != "Forward n2 POST /v1/topics/orders/ack?receipt_handle=1:4:9&extend=45s user= timeout=5s" {
		t.Fatalf("forwarded extend for a duration: %d, %q", w.Code, got)
	}
	if e.rec.count("Consume")+e.rec.count("Ack")+e.rec.count("ExtendFor") != 0 {
		t.Fatal("served locally too")
	}

	e.cl.errs["n2"] = apierr.Unavailable(time.Second, "node n2 unreachable: deadline exceeded")
	w = e.do(request{method: "GET", target: "/v1/topics/orders/consume?partition=1"})
	if msg := errorBody(t, w); w.Code != 503 || w.Header().Get("Retry-After") != "1" || !strings.Contains(msg, "unreachable") {
		t.Fatalf("unreachable owner: %d %q", w.Code, msg)
	}
	if !e.s.suspects.is("n2") {
		t.Fatal("an owner that did not answer is not a suspect")
	}
	// A partition this node owns is served here.
	if w := e.do(request{method: "GET", target: "/v1/topics/orders/consume?partition=0"}); w.Code != 204 || e.rec.count("Consume") != 1 {
		t.Fatalf("local partition: %d, %d consumes", w.Code, e.rec.count("Consume"))
	}
}

// A batch ack settles local handles here and sends the others to their
// owners, one batch per owner; every result keeps its place, and an owner
// that cannot be reached fails only its own handles.
func TestBatchAckSplitsByOwner(t *testing.T) {
	e := newEnv(t, clustered)
	e.cl.owners["orders/1"] = "n2"
	e.cl.owners["orders/2"] = "n3"
	e.cl.answers["n2"] = ForwardResponse{Status: 200, Body: []byte(`{"results":[{"receipt_handle":"1:0:1","status":204},{"receipt_handle":"1:1:2","status":410,"error":"lapsed"}]}`)}
	e.cl.errs["n3"] = apierr.Unavailable(time.Second, "node n3 unreachable")
	e.plane.ackErrs["0:5:5"] = apierr.Gone("the lease of 0:5:5 lapsed")
	w := e.do(request{method: "POST", target: "/v1/topics/orders/ack",
		body: `{"receipt_handles":["1:0:1","0:4:4","2:0:3","1:1:2","0:5:5","junk"]}`})
	var got struct{ Results []AckResult }
	if decode(t, w, &got); w.Code != 200 || len(got.Results) != 6 {
		t.Fatalf("%d %q", w.Code, w.Body.String())
	}
	want := []AckResult{
		{"1:0:1", 204, ""}, {"0:4:4", 204, ""}, {"2:0:3", 503, "node n3 unreachable"},
		{"1:1:2", 410, "lapsed"}, {"0:5:5", 410, "the lease of 0:5:5 lapsed"}, {"junk", 204, ""},
	}
	for i := range want {
		if got.Results[i] != want[i] {
			t.Errorf("result %d: %+v, want %+v", i, got.Results[i], want[i])
		}
	}
	if got := e.rec.last("AckBatch"); got != "AckBatch orders [0:4:4 0:5:5 junk]" {
		t.Errorf("settled here: %q", got)
	}
	if string(e.cl.sentTo("n2").Body) != `{"receipt_handles":["1:0:1","1:1:2"]}` {
		t.Errorf("sent to n2: %q", e.cl.sentTo("n2").Body)
	}
}

// An unpinned consume asks every owner without a wait, this node by a
// local consume, and answers with the first record one of them has.
func TestUnpinnedConsumeAsksTheOtherOwners(t *testing.T) {
	e := newEnv(t, clustered)
	e.cl.owners["orders/1"] = "n2"
	e.cl.owners["orders/2"] = "n3"
	e.cl.answers["n2"] = ForwardResponse{Status: 204}
	e.cl.answers["n3"] = ForwardResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"offset":9}`)}
	// Whoever's turn it is to be asked first, n3's record is the answer.
	for range 3 {
		w := e.do(request{method: "GET", target: "/v1/topics/orders/consume?wait=3s"})
		if w.Code != 200 || w.Body.String() != `{"offset":9}` {
			t.Fatalf("%d %q", w.Code, w.Body.String())
		}
	}
	if c := e.rec.last("Consume"); c != "Consume orders max=0 wait=0s" {
		t.Fatalf("local round: %q", c)
	}
	if got := e.cl.sentTo("n2").RawQuery; got != "" {
		t.Fatalf("the wait went with the forward: %q", got)
	}
}

// The owners take turns being asked first, in proportion to the
// partitions each owns: with records everywhere, three unpinned consumes
// of a topic whose three partitions are on three nodes are answered by
// each node once — this node's records never keep the others' waiting —
// and in this node's turn nobody else is asked.
func TestUnpinnedConsumesTakeTurnsAskingFirst(t *testing.T) {
	e := newEnv(t, clustered)
	e.cl.owners["orders/1"] = "n2"
	e.cl.owners["orders/2"] = "n3"
	e.cl.answers["n2"] = ForwardResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"offset":2}`)}
	e.cl.answers["n3"] = ForwardResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"offset":3}`)}
	e.plane.msgs = []broker.Message{{Topic: "orders", Partition: 0, Offset: 1, Payload: []byte("1"), ReceiptHandle: "0:1:1"}}
	from := map[string]int{}
	for range 6 {
		forwards := e.rec.count("Forward")
		w := e.do(request{method: "GET", target: "/v1/topics/orders/consume"})
		if w.Code != http.StatusOK {
			t.Fatalf("%d %q", w.Code, w.Body.String())
		}
		switch b := w.Body.String(); {
		case b == `{"offset":2}`:
			from["n2"]++
		case b == `{"offset":3}`:
			from["n3"]++
		default:
			from["here"]++
			if n := e.rec.count("Forward") - forwards; n != 0 {
				t.Fatalf("a record here, and %d other owners asked first", n)
			}
		}
	}
	if from["here"] != 2 || from["n2"] != 2 || from["n3"] != 2 {
		t.Fatalf("six consumes answered %v, want two from each owner", from)
	}
}

// Every route about a topic first lets this replica catch up on a topic it
// does not know yet (read-your-writes across nodes); a name that is not a
// topic name costs the leader no question.
func TestTopicRoutesCatchUpFirst(t *testing.T) {
	e := newEnv(t, clustered)
	e.do(request{method: "GET", target: "/v1/topics/fresh"})
	if got := e.rec.last("CatchUpTopic"); got != "CatchUpTopic fresh" {
		t.Fatalf("catch-up: %q", got)
	}
	e.do(request{method: "GET", target: "/v1/topics/bad$name"})
	if e.rec.count("CatchUpTopic") != 1 {
		t.Fatal("caught up for an invalid name")
	}
}

// sentTo is the last request forwarded to node.
func (c *fakeCluster) sentTo(node string) ForwardRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.sent) - 1; i >= 0; i-- {
		if c.sentNodes[i] == node {
			return c.sent[i]
		}
	}
	c.t.Fatalf("nothing was forwarded to %q", node)
	return ForwardRequest{}
}
