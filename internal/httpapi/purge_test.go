package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
)

// A purge answers {"purged": n} for the owner or an admin, and the
// unknown topic's 404 to them.
func TestPurgeAnswersThePurgedCount(t *testing.T) {
	e := newEnv(t, secured)
	w := e.do(request{method: "POST", target: "/v1/topics/mine/purge", user: "alice:pw"})
	if w.Code != 200 || w.Body.String() != `{"purged":1}`+"\n" && w.Body.String() != `{"purged":1}` {
		t.Fatalf("owner's purge: %d %q", w.Code, w.Body.String())
	}
	if got := e.rec.last("Purge"); got != "Purge mine []" {
		t.Fatalf("asked the data plane %q", got)
	}
	if w := e.do(request{method: "POST", target: "/v1/topics/orders/purge?partition=2", body: "{}", user: "root:pw"}); w.Code != 200 || e.rec.last("Purge") != "Purge orders [2]" {
		t.Fatalf("admin's pinned purge: %d %q, %q", w.Code, w.Body.String(), e.rec.last("Purge"))
	}
	w = e.do(request{method: "POST", target: "/v1/topics/nope/purge", user: "root:pw"})
	if msg := errorBody(t, w); w.Code != 404 || !strings.Contains(msg, `"nope" does not exist`) {
		t.Fatalf("unknown topic: %d %q", w.Code, msg)
	}
}

// In a cluster the node purges the partitions it owns and asks each other
// owner for each of its partitions (pinned, so the owner purges only that
// one), adding their counts; an owner's refusal is the answer, as it is.
func TestPurgeAsksEachOwner(t *testing.T) {
	e := newEnv(t, clustered)
	e.cl.owners["orders/1"] = "n2"
	e.cl.owners["orders/2"] = "n3"
	e.cl.answers["n2"] = ForwardResponse{Status: 200, Body: []byte(`{"purged":10}`)}
	e.cl.answers["n3"] = ForwardResponse{Status: 200, Body: []byte(`{"purged":5}`)}
	var got PurgeResult
	w := e.do(request{method: "POST", target: "/v1/topics/orders/purge"})
	if decode(t, w, &got); w.Code != 200 || got.Purged != 2+10+5 {
		t.Fatalf("%d %q", w.Code, w.Body.String())
	}
	if e.rec.last("Purge") != "Purge orders [0]" {
		t.Fatalf("purged here: %q", e.rec.last("Purge"))
	}
	for node, q := range map[string]string{"n2": "partition=1", "n3": "partition=2"} {
		if s := e.cl.sentTo(node); s.Method != "POST" || s.Path != "/v1/topics/orders/purge" || s.RawQuery != q {
			t.Fatalf("sent to %s: %+v", node, s)
		}
	}
	e.cl.answers["n3"] = ForwardResponse{Status: 503, ContentType: "application/json", Body: []byte(`{"error":"partition 2 of \"orders\" is being moved; retry"}`), RetryAfter: time.Second}
	w = e.do(request{method: "POST", target: "/v1/topics/orders/purge"})
	if msg := errorBody(t, w); w.Code != 503 || !strings.Contains(msg, "being moved") || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("an owner's refusal: %d %q", w.Code, msg)
	}
	e.cl.errs["n2"] = apierr.Unavailable(time.Second, "node n2 unreachable")
	if w := e.do(request{method: "POST", target: "/v1/topics/orders/purge"}); w.Code != 503 {
		t.Fatalf("unreachable owner: %d %q", w.Code, w.Body.String())
	}
	// A pinned purge goes to its owner whole; one forwarded here for a
	// partition that moved meanwhile is a 503, never forwarded again.
	e.cl.errs = map[string]error{}
	if w := e.do(request{method: "POST", target: "/v1/topics/orders/purge?partition=1"}); w.Code != 200 || e.cl.sentTo("n2").RawQuery != "partition=1" {
		t.Fatalf("pinned purge: %d", w.Code)
	}
	before := e.rec.count("Forward")
	r := httptest.NewRequestWithContext(Forwarded(context.Background(), "alice"), "POST", "/v1/topics/orders/purge?partition=1", nil)
	w = httptest.NewRecorder()
	e.s.ServeHTTP(w, r)
	if w.Code != 503 || e.rec.count("Forward") != before {
		t.Fatalf("forwarded purge of a moved partition: %d, forwarded again: %v", w.Code, e.rec.count("Forward") != before)
	}
}
