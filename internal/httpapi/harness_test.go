package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
)

// env is the API over fakes: no process, no disk, no network.
type env struct {
	t     *testing.T
	s     *Server
	rec   *recorder // every fake's calls, in order
	plane *fakePlane
	fan   *fakeFan
	users *fakeUsers
	admin *fakeAdmin
	cl    *fakeCluster // nil unless clustered
	logs  *bytes.Buffer

	opts   Options // what New is given (envOpts fill it in)
	secure bool
	authn  Authenticator // when set, secure's authenticator instead of testPrincipals
	m      *metrics.Metrics
}

// The principals of a secured env (password "pw"): root holds admin on
// everything; alice may create and owns "mine"; bob may create but owns
// nothing (reborn is a later alice); producer may produce to orders*; consumer may consume orders.
var testPrincipals = fakeAuth{
	"root":  {Name: "root", ID: 1, Grants: auth.RootGrants},
	"alice": {Name: "alice", ID: 7, Grants: []meta.Grant{{Action: meta.ActionCreate, Patterns: []string{"*"}}}},
	"bob":   {Name: "bob", ID: 8, Grants: []meta.Grant{{Action: meta.ActionCreate, Patterns: []string{"*"}}}},
	// reborn is a later user named alice (deleted and re-created): not
	// the owner of what the first alice created.
	"reborn":   {Name: "alice", ID: 70, Grants: []meta.Grant{{Action: meta.ActionCreate, Patterns: []string{"*"}}}},
	"producer": {Name: "producer", ID: 9, Grants: []meta.Grant{{Action: meta.ActionProduce, Patterns: []string{"orders*"}}}},
	// limited may produce to and consume orders at 2 records, 100 bytes
	// and 1 consume request a second; exempt has limits of its own
	// that are all 0 (unlimited, whatever the defaults).
	"limited": {Name: "limited", ID: 11, Grants: []meta.Grant{{Action: meta.ActionProduce, Patterns: []string{"orders"}},
		{Action: meta.ActionConsume, Patterns: []string{"orders"}}},
		Limits: &meta.Limits{ProduceRecordsPerS: ptrTo[int64](2), ProduceBytesPerS: ptrTo[int64](100), ConsumeRequestsPerS: ptrTo[int64](1)}},
	"exempt": {Name: "exempt", ID: 12, Grants: []meta.Grant{{Action: meta.ActionProduce, Patterns: []string{"orders"}}},
		Limits: &meta.Limits{ProduceRecordsPerS: ptrTo[int64](0), ProduceBytesPerS: ptrTo[int64](0), ConsumeRequestsPerS: ptrTo[int64](0)}},
	"consumer": {Name: "consumer", ID: 10, Grants: []meta.Grant{{Action: meta.ActionConsume, Patterns: []string{"orders"}}}},
}

type envOpt func(*env)

// secured turns authentication on.
func secured(e *env) { e.secure = true }

// clustered puts the node in a cluster as n1, the leader unless told
// otherwise.
func clustered(e *env) {
	e.cl = &fakeCluster{recorder: e.rec, t: e.t, self: "n1", leader: true, owners: map[string]string{},
		answers: map[string]ForwardResponse{}, errs: map[string]error{}, version: 40}
	e.opts.Cluster = e.cl
}

func newEnv(t *testing.T, opts ...envOpt) *env {
	t.Helper()
	rec := &recorder{}
	e := &env{t: t, rec: rec, logs: &bytes.Buffer{},
		plane: &fakePlane{recorder: rec, topics: map[string]meta.Topic{
			"mine":   {Name: "mine", Partitions: 3, Owner: "alice", OwnerID: 7},
			"orders": {Name: "orders", Partitions: 3},
		}, ackErrs: map[string]error{}},
		fan: &fakeFan{rec}, users: &fakeUsers{rec}, admin: &fakeAdmin{rec}}
	ready := func() (bool, string) { return true, "" }
	e.opts = Options{Users: e.users, UserStore: userStore{"root": {Name: "root", ID: 1, Grants: auth.RootGrants}},
		ClusterAdmin: e.admin}
	for _, o := range opts {
		o(e)
	}
	var authn Authenticator
	if e.secure {
		authn = testPrincipals
		if e.authn != nil {
			authn = e.authn
		}
	}
	e.m = metrics.New()
	e.s = New(e.plane, e.fan, e.m, authn, ready, slog.New(slog.NewTextHandler(e.logs, nil)), e.opts)
	return e
}

// request is one HTTP request to the API.
type request struct {
	method, target, body string
	user                 string // Basic credentials "user:pw"; "" sends none; "user:x" a wrong password
	header               map[string]string
	contentLength        int64 // when not 0, declared instead of the body's length (-1: unknown)
}

func (e *env) do(r request) *httptest.ResponseRecorder {
	e.t.Helper()
	return e.doCtx(r, context.Background())
}

// doCtx is do with the request's context (Forwarded, say).
func (e *env) doCtx(r request, ctx context.Context) *httptest.ResponseRecorder {
	e.t.Helper()
	var body io.Reader = strings.NewReader(r.body)
	req := httptest.NewRequestWithContext(ctx, r.method, r.target, body)
	if r.contentLength != 0 {
		req.ContentLength = r.contentLength
	}
	if r.user != "" {
		name, pw, ok := strings.Cut(r.user, ":")
		if !ok {
			pw = "pw"
		}
		req.SetBasicAuth(name, pw)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, req)
	observe(e, req, w) // held to openapi.json after the tests (TestMain)
	return w
}

// errorBody requires the API's error shape: JSON, exactly {"error": "<a
// sentence>"}, and returns the sentence.
func errorBody(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error answer %d has Content-Type %q, want application/json (body %q)", w.Code, ct, w.Body.String())
	}
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("error answer %d is not JSON: %q", w.Code, w.Body.String())
	}
	msg, ok := m["error"].(string)
	if idx, has := m["index"]; has {
		// A batch refusal of one record also names it: a whole number,
		// the one the sentence starts with.
		n, isNum := idx.(float64)
		if !isNum || n < 0 || n != float64(int(n)) || !strings.HasPrefix(msg, fmt.Sprintf("record %d:", int(n))) {
			t.Fatalf("error answer %d is %q: its index does not name the record of its sentence", w.Code, w.Body.String())
		}
		delete(m, "index")
	}
	if len(m) != 1 || !ok || msg == "" {
		t.Fatalf("error answer %d is %q, want exactly {\"error\": \"<sentence>\"} (batch refusals: and \"index\")", w.Code, w.Body.String())
	}
	for _, pkg := range []string{"lease: ", "storage: ", "wal: ", "meta: ", "broker: ", "fanout: ", "json: ", "http: ", "url: ", "strconv."} {
		if strings.Contains(msg, pkg) {
			t.Fatalf("error answer %d %q names the Go package %q: a client reads a sentence, not our layout", w.Code, msg, pkg)
		}
	}
	return msg
}

// decode unmarshals a JSON answer into v.
func decode(t *testing.T, w *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		t.Fatalf("answer %d %q: %v", w.Code, w.Body.String(), err)
	}
}
