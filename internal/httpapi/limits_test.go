package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/ratelimit"
	dto "github.com/prometheus/client_model/go"
)

func ptrTo[T any](v T) *T { return &v }

// limitedEnv is a secured env whose limiter runs on clk, with defaults.
func limitedEnv(t *testing.T, clk *clock.Fake, defaults meta.Rates, opts ...envOpt) *env {
	t.Helper()
	base := []envOpt{secured, func(e *env) {
		e.opts.Limiter = ratelimit.New(clk)
		e.opts.DefaultLimits = defaults
	}}
	// The replica knows the users the authenticator knows (a user it
	// does not know is deleted, and its bucket dropped).
	known := func(e *env) {
		a, _ := e.authn.(fakeAuth)
		if a == nil {
			a = testPrincipals
		}
		store := userStore{}
		for _, p := range a {
			store[p.Name] = meta.User{Name: p.Name, ID: p.ID, Grants: p.Grants, Limits: p.Limits}
		}
		e.opts.UserStore = store
	}
	return newEnv(t, append(append(base, opts...), known)...)
}

func produceAs(e *env, user, body string) *httptest.ResponseRecorder {
	return e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: body, user: user})
}

// A user over its limit gets 429 with {"error": ...} and a Retry-After
// from its bucket, and nothing of the refused request reaches the data
// plane (so nothing is written to the WAL); after Retry-After it passes.
func TestRateLimitRefusesWithRetryAfterAndStoresNothing(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	e := limitedEnv(t, clk, meta.Rates{})
	for i := range 2 {
		if w := produceAs(e, "limited", "x"); w.Code != http.StatusAccepted {
			t.Fatalf("produce %d within the limit: %d %s", i, w.Code, w.Body.String())
		}
	}
	before := e.rec.count("Produce")
	w := produceAs(e, "limited", "x")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("third produce: %d Retry-After %q, want 429 with Retry-After 1", w.Code, w.Header().Get("Retry-After"))
	}
	if msg := errorBody(t, w); !strings.Contains(msg, "produce_records_per_s") || !strings.Contains(msg, "nothing of this request was stored") {
		t.Fatalf("429 says %q", msg)
	}
	// A batch is refused whole, before it is decoded, while the bucket is
	// empty; nothing of it is produced either.
	w = e.do(request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1}]}`, user: "limited"})
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("batch into an empty bucket: %d", w.Code)
	}
	if e.rec.count("Produce") != before || e.rec.count("ProduceBatch") != 0 {
		t.Fatalf("a refused produce reached the data plane: %v", e.rec.mutations())
	}
	if got := rateLimited(t, e, "limited", "produce_records_per_s"); got != 2 {
		t.Fatalf("narad_rate_limited_requests_total = %v, want 2", got)
	}
	clk.Advance(time.Second)
	// The byte limit (100) takes keys and payloads (and headers and msg_id:
	// TestRateLimitCountsHeadersAndMsgID): after 50 bytes, a
	// record of 60 is refused, though the record limit has room.
	if w := e.do(request{method: "POST", target: "/v1/topics/orders/produce?key=k", body: strings.Repeat("a", 49), user: "limited"}); w.Code != http.StatusAccepted {
		t.Fatalf("50 bytes: %d", w.Code)
	}
	w = e.do(request{method: "POST", target: "/v1/topics/orders/produce/batch", user: "limited",
		body: `{"records":[{"payload":"` + strings.Repeat("b", 60) + `"}]}`})
	if w.Code != http.StatusTooManyRequests || !strings.Contains(errorBody(t, w), "produce_bytes_per_s") || e.rec.count("ProduceBatch") != 0 {
		t.Fatalf("batch over the byte limit: %d %s", w.Code, w.Body.String())
	}
	clk.Advance(time.Second)
	w = e.do(request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},{"payload":2}]}`, user: "limited"})
	if w.Code != http.StatusAccepted {
		t.Fatalf("after Retry-After a batch within the limit: %d %s", w.Code, w.Body.String())
	}
}

// A limited user does not slow another: while one is refused, every
// request of the other is admitted (deterministic: the clock stands
// still), and two limited users have a bucket each.
func TestRateLimitedUserDoesNotSlowAnother(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	e := limitedEnv(t, clk, meta.Rates{}, func(e *env) {
		// other is limited like limited, in a bucket of its own.
		p := testPrincipals["limited"]
		p.Name, p.ID = "other", 13
		e.authn = fakeAuth{"limited": testPrincipals["limited"], "producer": testPrincipals["producer"], "other": p}
	})
	refused := 0
	for i := range 50 {
		if w := produceAs(e, "limited", "x"); w.Code == http.StatusTooManyRequests {
			refused++
		}
		if w := produceAs(e, "producer", "x"); w.Code != http.StatusAccepted {
			t.Fatalf("request %d of an unlimited user beside a limited one: %d %s", i, w.Code, w.Body.String())
		}
	}
	if refused != 48 {
		t.Fatalf("the limited user was refused %d times of 50, want 48", refused)
	}
	for i := range 2 {
		if w := produceAs(e, "other", "x"); w.Code != http.StatusAccepted {
			t.Fatalf("produce %d of another limited user: %d", i, w.Code)
		}
	}
}

// The configured defaults apply to a user without limits of its own,
// field by field to one with some; a user's own 0 exempts it.
func TestRateLimitDefaultsAndOverrides(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	e := limitedEnv(t, clk, meta.Rates{ProduceRecordsPerS: 1, ConsumeRequestsPerS: 1}, func(e *env) {
		partial := testPrincipals["limited"]
		partial.Name, partial.ID = "partial", 14
		// Its own produce limit only: the default consume limit stays.
		partial.Limits = &meta.Limits{ProduceRecordsPerS: ptrTo[int64](3)}
		e.authn = fakeAuth{"producer": testPrincipals["producer"], "exempt": testPrincipals["exempt"], "partial": partial}
	})
	if w := produceAs(e, "producer", "x"); w.Code != http.StatusAccepted {
		t.Fatal(w.Code)
	}
	if w := produceAs(e, "producer", "x"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("a user without limits past the default: %d", w.Code)
	}
	for i := range 20 {
		if w := produceAs(e, "exempt", "x"); w.Code != http.StatusAccepted {
			t.Fatalf("an exempt user's produce %d: %d", i, w.Code)
		}
	}
	for i := range 3 {
		if w := produceAs(e, "partial", "x"); w.Code != http.StatusAccepted {
			t.Fatalf("partial's produce %d under its own limit of 3: %d", i, w.Code)
		}
	}
	if w := produceAs(e, "partial", "x"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("partial past its own limit: %d", w.Code)
	}
	consume := func() int {
		return e.do(request{method: "GET", target: "/v1/topics/orders/consume", user: "partial"}).Code
	}
	if c := consume(); c == http.StatusTooManyRequests {
		t.Fatal("first consume refused")
	}
	if c := consume(); c != http.StatusTooManyRequests {
		t.Fatalf("partial's second consume past the default of 1: %d", c)
	}
}

// A consume costs one request (a long poll too); acks, extends and nacks
// cost nothing, so a consumer at its limit still settles what it holds.
func TestRateLimitCountsConsumesNotAcks(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	e := limitedEnv(t, clk, meta.Rates{})
	if w := e.do(request{method: "GET", target: "/v1/topics/orders/consume?wait=5s", user: "limited"}); w.Code == http.StatusTooManyRequests {
		t.Fatal("first consume refused")
	}
	consumes := e.rec.count("Consume")
	w := e.do(request{method: "GET", target: "/v1/topics/orders/consume?partition=0&offset=0", user: "limited"})
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" || !strings.Contains(errorBody(t, w), "consume_requests_per_s") {
		t.Fatalf("second consume (a replay) in the same second: %d %q", w.Code, w.Body.String())
	}
	if e.rec.count("Consume") != consumes {
		t.Fatal("a refused consume reached the data plane")
	}
	for _, target := range []string{"/v1/topics/orders/ack?receipt_handle=0:0:1", "/v1/topics/orders/ack?receipt_handle=0:0:1&extend=true",
		"/v1/topics/orders/ack?receipt_handle=0:0:1&extend=0"} {
		if w := e.do(request{method: "POST", target: target, user: "limited"}); w.Code != http.StatusNoContent {
			t.Fatalf("%s at the consume limit: %d %s", target, w.Code, w.Body.String())
		}
	}
}

// A request forwarded by another node was limited there: it is not
// counted here; and this node counts a consume it forwards once.
func TestRateLimitCountsForwardedRequestsOnce(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	e := limitedEnv(t, clk, meta.Rates{ProduceRecordsPerS: 1, ConsumeRequestsPerS: 1}, clustered, func(e *env) {
		e.cl.owners["orders/0"] = "n2"
	})
	// Forwarded here (no credentials: the sending node authenticated):
	// the defaults would allow one a second; none is refused.
	for i := range 5 {
		req := request{method: "GET", target: "/v1/topics/orders/consume?partition=1"}
		w := e.doCtx(req, Forwarded(context.Background(), "limited"))
		if w.Code == http.StatusTooManyRequests {
			t.Fatalf("forwarded consume %d counted again here", i)
		}
	}
	// From the client: counted here once, then forwarded to the owner.
	if w := e.do(request{method: "GET", target: "/v1/topics/orders/consume?partition=0", user: "limited"}); w.Code == http.StatusTooManyRequests || e.rec.count("Forward") != 1 {
		t.Fatalf("first consume: %d, forwards %d", w.Code, e.rec.count("Forward"))
	}
	if w := e.do(request{method: "GET", target: "/v1/topics/orders/consume?partition=0", user: "limited"}); w.Code != http.StatusTooManyRequests || e.rec.count("Forward") != 1 {
		t.Fatalf("second consume: %d, forwards %d (want 429 here, not forwarded)", w.Code, e.rec.count("Forward"))
	}
}

// With security off every request is one user, "anonymous", under the
// defaults.
func TestRateLimitAnonymousIsOneUser(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	e := newEnv(t, func(e *env) {
		e.opts.Limiter = ratelimit.New(clk)
		e.opts.DefaultLimits = meta.Rates{ProduceRecordsPerS: 1}
	})
	if w := e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: "x"}); w.Code != http.StatusAccepted {
		t.Fatal(w.Code)
	}
	w := e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: "x"})
	if w.Code != http.StatusTooManyRequests || !strings.Contains(errorBody(t, w), `user "anonymous"`) {
		t.Fatalf("second anonymous produce: %d %s", w.Code, w.Body.String())
	}
}

// liveUsers is a users domain that changes, with versions, behind a real
// Authenticator: what a node reads from its replica.
type liveUsers struct {
	mu sync.Mutex
	v  uint64
	m  map[string]meta.User
}

func (u *liveUsers) User(name string) (meta.User, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	x, ok := u.m[name]
	return x, ok
}
func (u *liveUsers) UsersVersion() uint64 { u.mu.Lock(); defer u.mu.Unlock(); return u.v }
func (u *liveUsers) HasUsers() bool       { return true }
func (u *liveUsers) change(name string, f func(*meta.User) bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.v++
	x := u.m[name]
	if !f(&x) {
		delete(u.m, name)
		return
	}
	x.Version = u.v
	u.m[name] = x
}

// A change of a user's limits applies to its next request, with no
// restart; a deleted user's bucket and metric series go.
func TestRateLimitChangeAppliesLiveAndDeletedUsersAreDropped(t *testing.T) {
	hash, err := auth.Hash("pw-long-enough")
	if err != nil {
		t.Fatal(err)
	}
	grants := []meta.Grant{{Action: meta.ActionProduce, Patterns: []string{"orders"}}}
	users := &liveUsers{v: 1, m: map[string]meta.User{
		"ann": {Name: "ann", ID: 21, Version: 1, Hash: hash, Grants: grants, Limits: &meta.Limits{ProduceRecordsPerS: ptrTo[int64](1)}},
		"ben": {Name: "ben", ID: 22, Version: 1, Hash: hash, Grants: grants, Limits: &meta.Limits{ProduceRecordsPerS: ptrTo[int64](1)}},
	}}
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	lim := ratelimit.New(clk)
	e := newEnv(t, secured, func(e *env) {
		e.authn = auth.NewAuthenticator(users, nil)
		e.opts.Limiter = lim
		e.opts.UserStore = users
	})
	as := func(u string) int { return produceAs(e, u+":pw-long-enough", "x").Code }
	if as("ann") != http.StatusAccepted || as("ann") != http.StatusTooManyRequests {
		t.Fatal("ann's limit of 1 did not hold")
	}
	users.change("ann", func(u *meta.User) bool { u.Limits = &meta.Limits{ProduceRecordsPerS: ptrTo[int64](5)}; return true })
	// Her bucket keeps the share of its burst she used (all of it), now
	// refilled at 5 a second: a fifth of a second later she passes,
	// where the old limit would have her wait the whole second.
	clk.Advance(200 * time.Millisecond)
	if c := as("ann"); c != http.StatusAccepted {
		t.Fatalf("after raising ann's limit, her next produce: %d", c)
	}
	users.change("ann", func(u *meta.User) bool { u.Limits = nil; return true })
	for i := range 20 {
		if c := as("ann"); c != http.StatusAccepted {
			t.Fatalf("ann without limits, produce %d: %d", i, c)
		}
	}
	if as("ben") != http.StatusAccepted || as("ben") != http.StatusTooManyRequests {
		t.Fatal("ben's limit of 1 did not hold")
	}
	if rateLimitedSeries(t, e) != 2 || lim.Len() != 2 {
		t.Fatalf("series %d, buckets %d before deleting ben", rateLimitedSeries(t, e), lim.Len())
	}
	users.change("ben", func(*meta.User) bool { return false })
	users.change("ann", func(u *meta.User) bool { u.Limits = &meta.Limits{ProduceRecordsPerS: ptrTo[int64](1)}; return true })
	as("ann") // the next limited request sweeps
	if n := rateLimitedSeries(t, e); n != 1 {
		t.Fatalf("%d series after ben was deleted, want ann's only", n)
	}
	if lim.Len() != 1 {
		t.Fatalf("%d buckets after ben was deleted, want ann's only", lim.Len())
	}
}

// rateLimited is the value of narad_rate_limited_requests_total{user,limit}.
func rateLimited(t *testing.T, e *env, user, limit string) float64 {
	t.Helper()
	for _, m := range rateLimitedFamily(t, e) {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["user"] == user && labels["limit"] == limit {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// rateLimitedSeries is how many series the family has.
func rateLimitedSeries(t *testing.T, e *env) int { return len(rateLimitedFamily(t, e)) }

func rateLimitedFamily(t *testing.T, e *env) []*dto.Metric {
	t.Helper()
	fams, err := e.m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "narad_rate_limited_requests_total" {
			return f.GetMetric()
		}
	}
	return nil
}

// The byte limit counts what a record stores of the client's: key,
// payload, header names and values, and msg_id. "limited" has 100 bytes
// a second and 2 records: a produce of key 1 + payload 9 + header 4 + 76
// + msg_id 10 takes all 100, so the next, of one byte, is refused on
// bytes though the record limit has room; the same in a batch.
func TestRateLimitCountsHeadersAndMsgID(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	e := limitedEnv(t, clk, meta.Rates{})
	w := e.do(request{method: "POST", target: "/v1/topics/orders/produce?key=k", body: strings.Repeat("p", 9), user: "limited",
		header: map[string]string{"Narad-Header-Note": strings.Repeat("v", 76), "Narad-Msg-Id": "0123456789"}})
	if w.Code != http.StatusAccepted {
		t.Fatalf("100 bytes: %d %s", w.Code, w.Body.String())
	}
	w = produceAs(e, "limited", "x")
	if w.Code != http.StatusTooManyRequests || !strings.Contains(errorBody(t, w), "produce_bytes_per_s") {
		t.Fatalf("one byte more: %d %s, want 429 on produce_bytes_per_s", w.Code, w.Body.String())
	}
	clk.Advance(time.Second)
	w = e.do(request{method: "POST", target: "/v1/topics/orders/produce/batch", user: "limited",
		body: `{"records":[{"payload":"x","headers":{"h":"` + strings.Repeat("v", 88) + `"},"msg_id":"0123456789"}]}`})
	if w.Code != http.StatusAccepted {
		t.Fatalf("a batch of 100 bytes: %d %s", w.Code, w.Body.String())
	}
	w = produceAs(e, "limited", "x")
	if w.Code != http.StatusTooManyRequests || !strings.Contains(errorBody(t, w), "produce_bytes_per_s") {
		t.Fatalf("one byte after the batch: %d %s, want 429 on produce_bytes_per_s", w.Code, w.Body.String())
	}
}
