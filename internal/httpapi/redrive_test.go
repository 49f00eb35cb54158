package httpapi

import (
	"strings"
	"testing"
)

// A redrive runs here on this node's partitions first, then on each other
// owner of the topic's partitions with what is left of max (a forwarded
// redrive is served where it lands, never forwarded again); the answer
// sums what each moved.
func TestRedriveAsksEveryOwner(t *testing.T) {
	e := newEnv(t, clustered)
	e.cl.owners["orders/1"] = "n2"
	e.cl.owners["orders/2"] = "n3"
	e.cl.answers["n2"] = ForwardResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"moved":4}`)}
	e.cl.answers["n3"] = ForwardResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"moved":1}`)}
	w := e.do(request{method: "POST", target: "/v1/topics/orders/redrive", body: `{"to":"back","max":10}`})
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"moved":5}` {
		t.Fatalf("redrive: %d %q; want 200 moved 5", w.Code, w.Body.String())
	}
	if got := e.rec.last("Redrive"); got != "Redrive orders to=back max=10" {
		t.Fatalf("local redrive: %q", got)
	}
	if len(e.cl.sent) != 2 || string(e.cl.sent[0].Body) != `{"to":"back","max":10}` || string(e.cl.sent[1].Body) != `{"to":"back","max":6}` {
		var bodies []string
		for _, s := range e.cl.sent {
			bodies = append(bodies, string(s.Body))
		}
		t.Fatalf("forwarded %v; want max 10 to n2, then what was left (6) to n3", bodies)
	}

	// An owner's refusal ends it, saying what was moved before.
	e.cl.sent = nil
	e.cl.answers["n3"] = ForwardResponse{Status: 503, ContentType: "application/json", Body: []byte(`{"error":"disk full"}`)}
	w = e.do(request{method: "POST", target: "/v1/topics/orders/redrive", body: `{"to":"back"}`})
	if w.Code != 503 || !strings.Contains(errorBody(t, w), "disk full (4 records were moved before it") {
		t.Fatalf("redrive with a refusing owner: %d %q", w.Code, w.Body.String())
	}
}
