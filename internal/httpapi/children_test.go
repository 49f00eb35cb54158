package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/refusal"
)

// PATCH /v1/topics/{topic}/children/{child} reaches the engine with the
// filter as given (or null, to remove it) and answers the link.
func TestPatchChildReachesTheEngine(t *testing.T) {
	for _, c := range []struct{ body, call, filter string }{
		{`{"filter":{"kind":["a"]}}`, `PatchChild orders audit filter={"kind":["a"]} scope=`, `{"kind":["a"]}`},
		{`{"filter":{"n":{"m":[1]}},"filter_scope":"payload"}`, `PatchChild orders audit filter={"n":{"m":[1]}} scope=payload`, `{"n":{"m":[1]}}`},
		{`{"filter":null}`, `PatchChild orders audit filter=null scope=`, ""},
	} {
		e := newEnv(t)
		w := e.do(request{method: "PATCH", target: "/v1/topics/orders/children/audit", body: c.body})
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", c.body, w.Code, w.Body)
		}
		if got := e.rec.last("PatchChild"); got != c.call {
			t.Fatalf("%s: the engine saw %q, want %q", c.body, got, c.call)
		}
		var v struct {
			Name   string          `json:"name"`
			Filter json.RawMessage `json:"filter"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || v.Name != "audit" || string(v.Filter) != c.filter {
			t.Fatalf("%s: answer %s (%v)", c.body, w.Body, err)
		}
	}
}

// A malformed filter, on attach or patch, is 400 naming the place in the
// policy, decided from the body before anything reaches the engine: nothing
// is stored. So is a patch without a filter, with an unknown scope or a
// scope without a filter, or with an unknown field.
func TestMalformedFilterIs400NamingThePath(t *testing.T) {
	for _, c := range []struct{ method, target, body, want string }{
		{"POST", "/v1/topics/orders/children", `{"child":"audit","filter":{"price":[{"numeric":[">","x"]}]}}`, "filter.price[0].numeric[1]: "},
		{"POST", "/v1/topics/orders/children", `{"child":"audit","filter":{"a":{"b":["x"]}}}`, "filter.a: "},
		{"POST", "/v1/topics/orders/children", `{"child":"audit","filter":["x"]}`, "filter: want a JSON object"},
		{"POST", "/v1/topics/orders/children", `{"child":"audit","filter":{"a":["x"]},"filter_scope":"body"}`, `filter_scope "body"`},
		{"POST", "/v1/topics/orders/children", `{"child":"audit","filter_scope":"payload"}`, "needs a filter"},
		{"PATCH", "/v1/topics/orders/children/audit", `{"filter":{"store":[{"anything-but":[]}]}}`, "filter.store[0]"},
		{"PATCH", "/v1/topics/orders/children/audit", `{"filter":{"a":["x"]},"filter_scope":"payloads"}`, `filter_scope "payloads"`},
		{"PATCH", "/v1/topics/orders/children/audit", `{"filter":null,"filter_scope":"payload"}`, "needs a filter"},
		{"PATCH", "/v1/topics/orders/children/audit", `{}`, "filter or envelope is required"},
		{"PATCH", "/v1/topics/orders/children/audit", `{"filter":{},"scope":"payload"}`, `"scope"`},
		{"PATCH", "/v1/topics/orders/children/Bad*Name", `{"filter":null}`, "topic name"},
	} {
		expect400(t, c.method, c.target, c.body, c.want)
	}
}

// The engine's refusals of a patch keep their statuses: the link or the
// parent missing is 404, a re-attach in between is 409.
func TestPatchChildRefusals(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{refusal.New(refusal.ErrNotFound, 0, `"audit" is not a child of "orders"`), 404},
		{refusal.New(refusal.ErrTopicNotFound, 0, `parent topic "orders" does not exist`), 404},
		{refusal.New(refusal.ErrConflict, 0, "attach epoch changed"), 409},
	} {
		e := newEnv(t)
		e.rec.failWith("PatchChild", c.err)
		if w := e.do(request{method: "PATCH", target: "/v1/topics/orders/children/audit", body: `{"filter":null}`}); w.Code != c.want {
			t.Errorf("%v: %d %s, want %d", c.err, w.Code, w.Body, c.want)
		}
	}
}

// A link's envelope reaches the engine as given on attach and patch
// (null removes it, absent leaves it), and the answers show it.
func TestChildEnvelopeReachesTheEngine(t *testing.T) {
	const env = `{"format":"sns","topic_arn":"arn:aws:sns:us-east-1:000000000000:news"}`
	for _, c := range []struct{ method, target, body, call, shown string }{
		{"POST", "/v1/topics/orders/children", `{"child":"audit","envelope":` + env + `}`, `Attach orders child=audit delay=0 envelope=` + env, env},
		{"POST", "/v1/topics/orders/children", `{"child":"audit","envelope":null}`, `Attach orders child=audit delay=0 envelope=null`, ""},
		{"PATCH", "/v1/topics/orders/children/audit", `{"envelope":` + env + `}`, `PatchChild orders audit filter= scope= envelope=` + env, env},
		{"PATCH", "/v1/topics/orders/children/audit", `{"envelope":null}`, `PatchChild orders audit filter= scope= envelope=null`, ""},
		{"PATCH", "/v1/topics/orders/children/audit", `{"filter":{"k":["v"]},"envelope":` + env + `}`, `PatchChild orders audit filter={"k":["v"]} scope= envelope=` + env, env},
	} {
		e := newEnv(t)
		w := e.do(request{method: c.method, target: c.target, body: c.body})
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", c.body, w.Code, w.Body)
		}
		if got := e.rec.last(strings.Fields(c.call)[0]); got != c.call {
			t.Fatalf("%s: the engine saw %q, want %q", c.body, got, c.call)
		}
		var v struct {
			Envelope json.RawMessage `json:"envelope"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || string(v.Envelope) != c.shown {
			t.Fatalf("%s: answer %s (%v), want envelope %s", c.body, w.Body, err, c.shown)
		}
	}
}

// A malformed envelope, on attach or patch, is 400 decided from the body:
// nothing reaches the engine.
func TestMalformedEnvelopeIs400(t *testing.T) {
	for _, c := range []struct{ method, target, body, want string }{
		{"POST", "/v1/topics/orders/children", `{"child":"audit","envelope":{"format":"json","topic_arn":"arn:x"}}`, `envelope format "json"`},
		{"POST", "/v1/topics/orders/children", `{"child":"audit","envelope":{"format":"sns","topic_arn":"news"}}`, `does not start with`},
		{"POST", "/v1/topics/orders/children", `{"child":"audit","envelope":{"format":"sns"}}`, `topic_arn of 0 bytes`},
		{"POST", "/v1/topics/orders/children", `{"child":"audit","envelope":{"format":"sns","topic_arn":"arn:x","raw":true}}`, `unknown field "raw"`},
		{"POST", "/v1/topics/orders/children", `{"child":"audit","envelope":"sns"}`, `envelope: want`},
		{"PATCH", "/v1/topics/orders/children/audit", `{"envelope":{"format":"sns","topic_arn":"arn:a\tb"}}`, `not printable ASCII`},
		{"PATCH", "/v1/topics/orders/children/audit", `{"envelope":{"format":"SNS","topic_arn":"arn:x"}}`, `envelope format "SNS"`},
		{"PATCH", "/v1/topics/orders/children/audit", `{"envelope":{"format":"sns","topic_arn":"arn:x"},"filter_scope":"payload"}`, "needs a filter"},
	} {
		expect400(t, c.method, c.target, c.body, c.want)
	}
}

// expect400 sends the request and wants 400 naming want, with nothing
// reaching the engine.
func expect400(t *testing.T, method, target, body, want string) {
	t.Helper()
	e := newEnv(t)
	w := e.do(request{method: method, target: target, body: body})
	var answer struct{ Error string }
	json.Unmarshal(w.Body.Bytes(), &answer)
	if w.Code != 400 || !strings.Contains(answer.Error, want) {
		t.Errorf("%s %s %s: %d %s, want 400 naming %q", method, target, body, w.Code, w.Body, want)
	}
	if n := len(e.rec.mutations()); n != 0 {
		t.Errorf("%s: a refused request reached the engine: %v", body, e.rec.mutations())
	}
}
