package e2e

// The later subtests of TestBadInputChildren: the link rules as other
// routes see them (create with a parent, a child's schema, the parent's
// retention, produce to a child), under races, and at a full parent.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// createWithParent sends every client error of POST /v1/topics with a
// parent, then makes two children that way.
func (f *biCh) createWithParent(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		body     string
		contains []string
		absent   string
	}{
		{"parent missing", 404, `{"name":"c-nopar","parent":"nopar"}`, []string{"nopar", "does not exist"}, "c-nopar"},
		{"parent missing, delay", 404, `{"name":"c-nopar","parent":"nopar","fanout_delay_ms":1000}`, []string{"nopar"}, "c-nopar"},
		{"parent is a child", 409, `{"name":"c-chain","parent":"par-c"}`, []string{"par-c", "child"}, "c-chain"},
		{"delay without parent", 400, `{"name":"c-orphan","fanout_delay_ms":1000}`, []string{"fanout_delay_ms", "parent"}, "c-orphan"},
		{"delay with empty parent", 400, `{"name":"c-orphan","parent":"","fanout_delay_ms":1000}`, []string{"fanout_delay_ms", "parent"}, "c-orphan"},
		{"delay -1", 400, `{"name":"c-neg","parent":"forever","fanout_delay_ms":-1}`, []string{"delay", "-1"}, "c-neg"},
		{"delay 1 year + 1 ms", 400, `{"name":"c-big","parent":"forever","fanout_delay_ms":31536000001}`, []string{"delay", "31536000001"}, "c-big"},
		{"delay as string", 400, `{"name":"c-str","parent":"forever","fanout_delay_ms":"1000"}`, []string{"fanout_delay_ms"}, "c-str"},
		{"retention 1 h, delay 1 ms", 400, `{"name":"c-ret","parent":"par","fanout_delay_ms":1}`, []string{"retention"}, "c-ret"},
		{"retention 1 h + 1 ms, delay 2 ms", 400, `{"name":"c-ret2","parent":"floor","fanout_delay_ms":2}`, []string{"retention"}, "c-ret2"},
		{"incompatible schema", 409, `{"name":"c-schema","parent":"spar","schema":` + biChNoIDSchema + `}`, []string{"schema"}, "c-schema"},
		{"schema under a schema-less parent", 409, `{"name":"c-sch2","parent":"par","schema":` + biChNoIDSchema + `}`, []string{"schema"}, "c-sch2"},
		// A topic as its own parent is malformed: 400, before the
		// name is found taken (409) or the parent missing (404).
		{"name is the parent", 400, `{"name":"par","parent":"par"}`, []string{"par", "own parent"}, ""},
		{"name is the parent, neither exists", 400, `{"name":"c-self","parent":"c-self"}`, []string{"c-self", "own parent"}, "c-self"},
		{"name exists (plain)", 409, `{"name":"kid","parent":"par"}`, []string{"kid", "exists"}, ""},
		{"name exists (child of another)", 409, `{"name":"other-c","parent":"par"}`, []string{"other-c", "exists"}, ""},
		{"bad parent name", 400, `{"name":"c-bad","parent":"a b"}`, []string{"topic name"}, "c-bad"},
		{"bad parent name ..", 400, `{"name":"c-bad","parent":".."}`, []string{"topic name"}, "c-bad"},
		{"bad name", 400, `{"name":"a b","parent":"par"}`, []string{"topic name"}, ""},
		{"partitions 109", 400, `{"name":"c-p109","parent":"par","partitions":109}`, []string{"partitions", "109"}, "c-p109"},
		{"partitions -1", 400, `{"name":"c-pneg","parent":"par","partitions":-1}`, []string{"partitions"}, "c-pneg"},
		{"retention 5", 400, `{"name":"c-r5","parent":"par","retention_ms":5}`, []string{"retention_ms"}, "c-r5"},
		{"bad schema", 400, `{"name":"c-sbad","parent":"spar","schema":{"type":12}}`, []string{"schema"}, "c-sbad"},
		{"unknown field", 400, `{"name":"c-unk","parent":"par","fanout_delay":5}`, []string{"fanout_delay"}, "c-unk"},
		{"parent not a string", 400, `{"name":"c-pnum","parent":5}`, []string{"parent"}, "c-pnum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.refused(t, c.status, f.createReq(c.body), c.contains...)
			if c.absent != "" {
				f.noTopic(t, c.absent)
			}
		})
	}
	t.Run("unknown query parameter", func(t *testing.T) {
		f.refused(t, 400, f.post("/v1/topics?parent=par", `{"name":"c-q","parent":"par"}`), "parent")
		f.noTopic(t, "c-q")
	})
	// A request that is malformed and names a missing parent: the spec
	// says a malformed request gets 400. The attach route checks names
	// and delay before looking the parent up; create-with-parent looks
	// the parent up before it checks the new topic's own fields.
	t.Run("malformed and parent missing", func(t *testing.T) {
		var wrong []string
		for _, body := range []string{
			`{"name":"a b","parent":"nopar"}`,
			`{"name":"c-p109","parent":"nopar","partitions":109}`,
			`{"name":"c-r5","parent":"nopar","retention_ms":5}`,
			`{"name":"c-sbad","parent":"nopar","schema":{"type":12}}`,
		} {
			before := f.take(t)
			a := f.createReq(body)(t)
			if a.status/100 == 2 {
				t.Fatalf("created: %v", a)
			}
			biWantError(t, a, a.status)
			f.unchanged(t, before)
			if a.status != http.StatusBadRequest {
				wrong = append(wrong, a.String())
			}
		}
		biAbsent(t, f.n, "c-p109")
		if len(wrong) > 0 {
			t.Logf("deviation (reported, not failed): a malformed create naming a missing parent gets 404, not 400:\n%s",
				strings.Join(wrong, "\n"))
		}
	})
	t.Run("accepted", func(t *testing.T) {
		hw := biHWMs(t, f.n, "hw")
		r := f.create(t, `{"name":"c-ok","parent":"hw"}`)
		f.watch = append(f.watch, r.Name)
		if r.Role != "child" || r.Parent != "hw" || r.Partitions != 3 || !slices.Equal(r.AttachOffsets, hw) ||
			!biChEpochRe.MatchString(r.AttachEpoch) || r.FanoutDelayMs != nil {
			t.Fatalf("create with parent: %+v (parent high watermarks %v)", r, hw)
		}
		r = f.create(t, `{"name":"c-max","parent":"forever","partitions":2,"fanout_delay_ms":31536000000}`)
		f.watch = append(f.watch, r.Name)
		if r.Role != "child" || r.Parent != "forever" || r.Partitions != 2 || r.FanoutDelayMs == nil || *r.FanoutDelayMs != biChMaxDelayMs {
			t.Fatalf("create delay child with parent: %+v", r)
		}
		f.settled(t, "hw")
		f.settled(t, "forever")
	})
}

// attachedSchema: an attached child inherits its parent's schema and the
// parent manages it while attached (docs/concepts.md, "Fan-out
// children"). skid-ok is attached to spar, which has a schema.
func (f *biCh) attachedSchema(t *testing.T) {
	patch := func(topic, body string) func(t testing.TB) biAnswer {
		return func(t testing.TB) biAnswer {
			return biDo(t, f.n, "PATCH", "/v1/topics/"+topic, "application/json", []byte(body))
		}
	}
	evolved := `{"type":"object","required":["id"],"properties":{"id":{"type":"integer"},"note":{"type":"string"}}}`
	f.refused(t, 409, patch("skid-ok", `{"schema":`+evolved+`}`), "skid-ok", "schema")
	f.refused(t, 409, patch("skid-ok", `{"visibility_timeout_ms":5000,"schema":`+evolved+`}`), "skid-ok", "schema")
	// A child of a parent without a schema: the spec only speaks of a
	// parent that has one. Logged for the report.
	before := f.take(t)
	a := patch("par-c", `{"schema":`+biSchema+`}`)(t)
	if a.status/100 != 2 {
		biWantError(t, a, a.status)
		f.unchanged(t, before)
	}
	t.Logf("setting a schema on a child whose parent has none: %v", a)

	// Clearing it is managing it too: it must be refused like setting
	// it, and the child must keep its schema.
	t.Run("spec: clearing the schema of an attached child", func(t *testing.T) {
		before := f.take(t)
		a := patch("skid-ok", `{"schema":null}`)(t)
		if a.status/100 == 2 {
			t.Errorf("server contradicts the spec: PATCH {\"schema\":null} on a child attached to a parent with a schema "+
				"(which manages the child's schema while attached, docs/concepts.md) is accepted: %v", a)
			f.unchanged(t, before)
			return
		}
		biWantError(t, a, http.StatusConflict, "schema")
		f.unchanged(t, before)
	})

	// After a detach the child keeps the schema it inherited and
	// manages it again: bodies invalid under it are still refused.
	t.Run("kept after detach", func(t *testing.T) {
		f.fixture(t, `{"name":"sk","partitions":1}`)
		biWantStatus(t, f.attach("spar", `{"child":"sk"}`)(t), http.StatusOK)
		inherited := biDescribeRaw(t, f.n, "spar")
		var want, got struct {
			Schema json.RawMessage `json:"schema"`
		}
		if err := json.Unmarshal([]byte(inherited), &want); err != nil || len(want.Schema) == 0 {
			t.Fatalf("spar's schema: %v %s", err, inherited)
		}
		biWantStatus(t, f.detach("spar", "sk")(t), http.StatusNoContent)
		if err := json.Unmarshal([]byte(biDescribeRaw(t, f.n, "sk")), &got); err != nil || string(got.Schema) != string(want.Schema) {
			t.Fatalf("detached sk shows schema %s, want the inherited %s (%v)", got.Schema, want.Schema, err)
		}
		f.refused(t, 400, f.post("/v1/topics/sk/produce", `{"name":"no id"}`), "schema")
		biWantStatus(t, biDo(t, f.n, "POST", "/v1/topics/sk/produce", "application/json", []byte(`{"id":1}`)), http.StatusAccepted)
		// It manages the schema now: an additive evolution is taken.
		evolvedSK := `{"type":"object","required":["id"],"properties":{"id":{"type":"integer"},"extra":{"type":"string"}}}`
		biWantStatus(t, patch("sk", `{"schema":`+evolvedSK+`}`)(t), http.StatusOK)
	})
	// The parent's delete frees its children the same way. Not
	// watched: the parent goes.
	t.Run("kept after the parent's delete", func(t *testing.T) {
		f.create(t, `{"name":"sdel","partitions":1,"schema":`+biSchema+`}`)
		f.create(t, `{"name":"sdel-c","parent":"sdel"}`)
		var want, got struct {
			Schema json.RawMessage `json:"schema"`
			Role   string          `json:"role"`
		}
		if err := json.Unmarshal([]byte(biDescribeRaw(t, f.n, "sdel")), &want); err != nil || len(want.Schema) == 0 {
			t.Fatalf("sdel's schema: %v", err)
		}
		biWantStatus(t, biDo(t, f.n, "DELETE", "/v1/topics/sdel", "", nil), http.StatusNoContent)
		if err := json.Unmarshal([]byte(biDescribeRaw(t, f.n, "sdel-c")), &got); err != nil ||
			got.Role != "standalone" || string(got.Schema) != string(want.Schema) {
			t.Fatalf("sdel-c after its parent's delete: role %q schema %s, want standalone with %s (%v)", got.Role, got.Schema, want.Schema, err)
		}
		f.refused(t, 400, f.post("/v1/topics/sdel-c/produce", `{"name":"no id"}`), "schema")
	})
}

// parentRetention: a parent's retention must be forever or at least its
// longest delay child's delay + 1 h (docs/concepts.md).
func (f *biCh) parentRetention(t *testing.T) {
	f.fixture(t, `{"name":"rp","partitions":2,"retention_ms":0}`)
	f.fixture(t, `{"name":"rp-d","parent":"rp","fanout_delay_ms":1000}`)
	f.fixture(t, `{"name":"rp-c","parent":"rp"}`)
	f.settled(t, "rp")
	patch := func(body string) func(t testing.TB) biAnswer {
		return func(t testing.TB) biAnswer {
			return biDo(t, f.n, "PATCH", "/v1/topics/rp", "application/json", []byte(body))
		}
	}
	for _, body := range []string{
		`{"retention_ms":3600000}`,
		`{"retention_ms":3600999}`,
		`{"retention_ms":3600000,"visibility_timeout_ms":5000}`,
		`{"visibility_timeout_ms":5000,"retention_ms":3600999,"max_in_flight_per_partition":7}`,
	} {
		t.Run(body, func(t *testing.T) {
			f.refused(t, 400, patch(body), "retention_ms", "rp-d")
			if r := f.record(t, "rp"); r.RetentionMs != 0 {
				t.Fatalf("retention changed to %d", r.RetentionMs)
			}
		})
	}
	// The floor itself, then forever again.
	a := patch(`{"retention_ms":3601000}`)(t)
	biWantStatus(t, a, http.StatusOK)
	if r := biChParseRecord(t, a); r.RetentionMs != 3601000 {
		t.Fatalf("%v", a)
	}
	f.refused(t, 400, patch(`{"retention_ms":3600999}`), "retention_ms")
	a = patch(`{"retention_ms":0}`)(t)
	biWantStatus(t, a, http.StatusOK)
	if r := biChParseRecord(t, a); r.RetentionMs != 0 || f.record(t, "rp").RetentionMs != 0 {
		t.Fatalf("%v", a)
	}
	// The plain child alone sets no floor: detach the delay child and
	// 1 h is accepted.
	biWantStatus(t, f.detach("rp", "rp-d")(t), http.StatusNoContent)
	biWantStatus(t, patch(`{"retention_ms":3600000}`)(t), http.StatusOK)
}

// produceToChildren: a delay child refuses direct produce; a plain child
// takes it.
func (f *biCh) produceToChildren(t *testing.T) {
	f.fixture(t, `{"name":"pd","partitions":2}`)
	f.fixture(t, `{"name":"pd-d","parent":"pd","fanout_delay_ms":1}`)
	f.fixture(t, `{"name":"pd-c","parent":"pd"}`)
	f.settled(t, "pd")
	d0, c0 := biHWMs(t, f.n, "pd-d"), biHWMs(t, f.n, "pd-c")
	for _, send := range []func(t testing.TB) biAnswer{
		f.post("/v1/topics/pd-d/produce", `x`),
		f.post("/v1/topics/pd-d/produce?partition=1", `x`),
		f.post("/v1/topics/pd-d/produce?key=k", `x`),
		f.post("/v1/topics/pd-d/produce/batch", `{"records":[{"payload":"x"},{"partition":0,"payload":"y"}]}`),
	} {
		f.refused(t, 409, send, "pd-d", "delay child")
	}
	// Fence through the parent: one record pinned to each parent
	// partition is copied (same partition count: same index) into both
	// children. A record the refused produces stored on a delay-child
	// partition would sit before the copy: the partition would grow by
	// two.
	p0 := biHWMs(t, f.n, "pd")
	biFence(t, f.n, "pd", p0)
	want := func(v []uint64) []uint64 {
		out := slices.Clone(v)
		for i := range out {
			out[i]++
		}
		return out
	}
	eventually(t, 15*time.Second, "the fence copies to reach pd-d", func() bool {
		got := biHWMs(t, f.n, "pd-d")
		for p := range got {
			if got[p] <= d0[p] {
				return false
			}
		}
		return true
	})
	if got := biHWMs(t, f.n, "pd-d"); !slices.Equal(got, want(d0)) {
		t.Errorf("delay child pd-d grew from %v to %v, want %v: a refused produce stored records", d0, got, want(d0))
	}
	biWaitHWMs(t, f.n, "pd-c", want(c0))
	// A plain child takes direct produce.
	c1 := want(c0)
	biWantStatus(t, biDo(t, f.n, "POST", "/v1/topics/pd-c/produce?partition=1", "application/octet-stream", []byte("direct")),
		http.StatusAccepted)
	c1[1]++
	biWaitHWMs(t, f.n, "pd-c", c1)
	f.settled(t, "pd")
	// And nothing else reached the delay child meanwhile.
	if got := biHWMs(t, f.n, "pd-d"); !slices.Equal(got, want(d0)) {
		t.Errorf("delay child pd-d: %v, want %v", got, want(d0))
	}
}

// races: the metastore re-checks the link rules inside the attach
// command, so two attaches that each pass the API's check cannot both
// win.
func (f *biCh) races(t *testing.T) {
	for _, name := range []string{"ra", "rb", "rk", "cx", "cy", "cz"} {
		f.fixture(t, `{"name":"`+name+`","partitions":1}`)
	}
	// A loser refused by the metastore's re-check (the API's own check
	// passed) words its 409 as `topic "x": ...`; counted for the log.
	byMeta, losers := 0, 0
	count := func(as []biAnswer, w int) {
		for i, a := range as {
			if i != w {
				losers++
				if strings.HasPrefix(biWantError(t, a, http.StatusConflict), "topic ") {
					byMeta++
				}
			}
		}
	}
	defer func() { t.Logf("%d of %d racing losers were refused by the metastore's re-check", byMeta, losers) }()
	for round := 0; round < 5; round++ {
		// One child, two parents.
		as := biChConcurrent(t, f.n,
			[3]string{"POST", "/v1/topics/ra/children", `{"child":"rk"}`},
			[3]string{"POST", "/v1/topics/rb/children", `{"child":"rk"}`})
		w := biChOneWins(t, as, http.StatusOK)
		count(as, w)
		win, lose := []string{"ra", "rb"}[w], []string{"ra", "rb"}[1-w]
		if r := f.record(t, "rk"); r.Parent != win {
			t.Fatalf("round %d: %s won but rk's parent is %q", round, win, r.Parent)
		}
		if l := f.listing(t, lose); len(l.Children) != 0 {
			t.Fatalf("round %d: the losing parent %s lists %+v", round, lose, l.Children)
		}
		biWantStatus(t, f.detach(win, "rk")(t), http.StatusNoContent)

		// A chain from two halves: cy under cx, and cz under cy.
		as = biChConcurrent(t, f.n,
			[3]string{"POST", "/v1/topics/cx/children", `{"child":"cy"}`},
			[3]string{"POST", "/v1/topics/cy/children", `{"child":"cz"}`})
		w = biChOneWins(t, as, http.StatusOK)
		count(as, w)
		x, y, z := f.record(t, "cx"), f.record(t, "cy"), f.record(t, "cz")
		if y.Parent != "" && len(y.Children) > 0 {
			t.Fatalf("round %d: a chain was made: cx %+v, cy %+v, cz %+v", round, x, y, z)
		}
		if w == 0 {
			biWantStatus(t, f.detach("cx", "cy")(t), http.StatusNoContent)
		} else {
			biWantStatus(t, f.detach("cy", "cz")(t), http.StatusNoContent)
		}

		// One name created as a child of two parents.
		name := fmt.Sprintf("rc%d", round)
		as = biChConcurrent(t, f.n,
			[3]string{"POST", "/v1/topics", `{"name":"` + name + `","parent":"ra"}`},
			[3]string{"POST", "/v1/topics", `{"name":"` + name + `","parent":"rb"}`})
		w = biChOneWins(t, as, http.StatusCreated)
		count(as, w)
		if r := f.record(t, name); r.Parent != []string{"ra", "rb"}[w] {
			t.Fatalf("round %d: %+v", round, r)
		}
		if l := f.listing(t, []string{"ra", "rb"}[1-w]); len(l.Children) != 0 {
			t.Fatalf("round %d: the losing parent lists %+v", round, l.Children)
		}
		biWantStatus(t, biDo(t, f.n, "DELETE", "/v1/topics/"+name, "", nil), http.StatusNoContent)
	}
}

// fullParent is the last subtest: 108 children make the parent full. One
// record on the parent first, so its partition directory exists and the
// 108 cursors anchor at once.
func (f *biCh) fullParent(t *testing.T) {
	f.fixture(t, `{"name":"p108","partitions":1}`)
	f.fixture(t, `{"name":"p108-x","partitions":1}`)
	biWantStatus(t, biDo(t, f.n, "POST", "/v1/topics/p108/produce", "application/octet-stream", []byte("r")), http.StatusAccepted)
	biWaitHWMs(t, f.n, "p108", []uint64{1})
	start := time.Now()
	var (
		wg     sync.WaitGroup
		next   atomic.Int64
		failed atomic.Value
	)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= 108 || failed.Load() != nil {
					return
				}
				// Not biDo: it may call t.Fatal, which is for the test
				// goroutine only.
				body := fmt.Sprintf(`{"name":"p108-c%03d","parent":"p108"}`, i)
				resp, err := biHTTP.Post(f.n.url("/v1/topics"), "application/json", strings.NewReader(body))
				if err != nil {
					failed.Store(err.Error())
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					failed.Store(fmt.Sprintf("%s -> %d %s", body, resp.StatusCode, b))
					return
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		t.Fatalf("creating the 108 children: %v", f)
	}
	took := time.Since(start)
	t.Logf("108 children created in %v", took)
	if took > 10*time.Second {
		t.Skipf("creating 108 children took %v (> 10 s): the full-parent case is skipped", took)
	}
	if l := f.listing(t, "p108"); len(l.Children) != 108 {
		t.Fatalf("p108 lists %d children", len(l.Children))
	}
	f.settled(t, "p108")
	f.refused(t, 409, f.attach("p108", `{"child":"p108-x"}`), "p108", "108")
	f.refused(t, 409, f.createReq(`{"name":"p108-c108","parent":"p108"}`), "p108", "108")
	f.noTopic(t, "p108-c108")
	if r := f.record(t, "p108-x"); r.Role != "standalone" {
		t.Fatalf("p108-x: %+v", r)
	}
	// One place freed: of two attaches racing for it, exactly one wins.
	f.fixture(t, `{"name":"p108-y","partitions":1}`)
	biWantStatus(t, f.detach("p108", "p108-c000")(t), http.StatusNoContent)
	as := biChConcurrent(t, f.n,
		[3]string{"POST", "/v1/topics/p108/children", `{"child":"p108-x"}`},
		[3]string{"POST", "/v1/topics/p108/children", `{"child":"p108-y"}`})
	w := biChOneWins(t, as, http.StatusOK)
	if l := f.listing(t, "p108"); len(l.Children) != 108 {
		t.Fatalf("p108 lists %d children", len(l.Children))
	}
	if r := f.record(t, []string{"p108-x", "p108-y"}[1-w]); r.Role != "standalone" {
		t.Fatalf("the loser was attached: %+v", r)
	}
}
