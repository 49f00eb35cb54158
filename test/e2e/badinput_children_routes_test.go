package e2e

// The "attach", "attach accepted", "list" and "detach" subtests of
// TestBadInputChildren: the children routes themselves, refused and
// accepted, on the fixtures the test made first.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// attachRefused sends every client error of POST
// /v1/topics/{parent}/children, each of which must leave nothing changed,
// and makes one remote link beside the remote refusals.
func (f *biCh) attachRefused(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		parent   string // escaped path segment
		body     string
		contains []string
	}{
		// 404
		{"parent missing", 404, "nopar", `{"child":"kid"}`, []string{"nopar", "does not exist"}},
		{"child missing", 404, "par", `{"child":"nokid"}`, []string{"nokid", "does not exist"}},
		{"both missing", 404, "nopar", `{"child":"nokid"}`, []string{"does not exist"}},
		{"parent missing, child attached elsewhere", 404, "nopar", `{"child":"par-c"}`, []string{"nopar"}},
		// 400: the body
		{"empty body", 400, "par", ``, []string{"empty"}},
		{"not JSON", 400, "par", `child=kid`, []string{"invalid JSON"}},
		{"JSON array", 400, "par", `[{"child":"kid"}]`, []string{"invalid JSON"}},
		{"JSON null", 400, "par", `null`, []string{"child"}},
		{"empty object", 400, "par", `{}`, []string{"child"}},
		{"truncated", 400, "par", `{"child":"kid"`, []string{"invalid JSON"}},
		{"trailing garbage", 400, "par", `{"child":"kid"} x`, []string{"trailing"}},
		{"second object", 400, "par", `{"child":"kid"}{"child":"kid"}`, []string{"trailing"}},
		{"unknown field", 400, "par", `{"child":"kid","delay":5}`, []string{"delay"}},
		{"unknown field parent", 400, "par", `{"child":"kid","parent":"other"}`, []string{"parent"}},
		{"child not a string", 400, "par", `{"child":5}`, []string{"child"}},
		{"child empty", 400, "par", `{"child":""}`, []string{"child"}},
		{"child a b", 400, "par", `{"child":"a b"}`, []string{"topic name", "a b"}},
		{"child ../x", 400, "par", `{"child":"../x"}`, []string{"topic name"}},
		{"child a/b", 400, "par", `{"child":"a/b"}`, []string{"topic name"}},
		{"child dot", 400, "par", `{"child":"."}`, []string{"topic name", "reserved"}},
		{"child dotdot", 400, "par", `{"child":".."}`, []string{"topic name", "reserved"}},
		{"child ü", 400, "par", `{"child":"ü"}`, []string{"topic name"}},
		{"child NUL", 400, "par", `{"child":"a\u0000b"}`, []string{"topic name"}},
		{"child 250 chars", 400, "par", `{"child":"` + biChLong250 + `"}`, []string{"topic name", "250"}},
		{"delay -1", 400, "par", `{"child":"kid","delay_ms":-1}`, []string{"delay", "-1"}},
		{"delay 1 year + 1 ms", 400, "forever", `{"child":"kid","delay_ms":31536000001}`, []string{"delay", "31536000001"}},
		{"delay min int64", 400, "forever", `{"child":"kid","delay_ms":-9223372036854775808}`, []string{"delay"}},
		{"delay 1e30", 400, "forever", `{"child":"kid","delay_ms":1e30}`, []string{"delay_ms"}},
		{"delay fractional", 400, "forever", `{"child":"kid","delay_ms":1.5}`, []string{"delay_ms"}},
		{"delay as string", 400, "forever", `{"child":"kid","delay_ms":"5"}`, []string{"delay_ms"}},
		{"delay out of range, parent missing", 400, "nopar", `{"child":"kid","delay_ms":-1}`, []string{"delay"}},
		{"bad child name, parent missing", 400, "nopar", `{"child":"a b"}`, []string{"topic name"}},
		// 400: invalid combinations (as the reference answers)
		{"child is the parent", 400, "par", `{"child":"par"}`, []string{"own child"}},
		{"standalone topic as its own child", 400, "kid", `{"child":"kid"}`, []string{"own child"}},
		{"parent retention 1 h, delay 1 ms", 400, "par", `{"child":"kid","delay_ms":1}`, []string{"retention", "3600000"}},
		{"parent retention 1 h, delay 1 h", 400, "par", `{"child":"kid","delay_ms":3600000}`, []string{"retention"}},
		{"parent retention 1 h + 1 ms, delay 2 ms", 400, "floor", `{"child":"kid","delay_ms":2}`, []string{"retention"}},
		// 409: conflicts with another resource's state
		{"already attached to this parent", 409, "par", `{"child":"par-c"}`, []string{"par-c", "already attached"}},
		{"already attached, other delay", 409, "forever", `{"child":"other-c","delay_ms":5}`, []string{"other-c", "already attached"}},
		{"already attached to another parent", 409, "other", `{"child":"par-c"}`, []string{"par-c", "already attached", "par"}},
		{"parent is itself a child", 409, "par-c", `{"child":"kid"}`, []string{"par-c", "child"}},
		{"parent is a child, child is its parent", 409, "par-c", `{"child":"par"}`, []string{"child"}},
		{"child has children", 409, "kid", `{"child":"par"}`, []string{"par", "children"}},
		{"child has children, parent is a parent", 409, "other", `{"child":"par"}`, []string{"par"}},
		{"incompatible schema", 409, "spar", `{"child":"skid"}`, []string{"schema", "skid"}},
		{"schema'd child under a schema-less parent", 409, "kid", `{"child":"skid"}`, []string{"skid", "schema"}},
	}
	for _, name := range biChBadPathNames {
		cases = append(cases, struct {
			name     string
			status   int
			parent   string
			body     string
			contains []string
		}{"bad parent name " + name[:min(len(name), 12)], 400, name, `{"child":"kid"}`, []string{"topic name"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.refused(t, c.status, f.attach(c.parent, c.body), c.contains...)
		})
	}
	t.Run("unknown query parameter", func(t *testing.T) {
		for _, q := range []string{"force=true", "delay_ms=5", "child=kid"} {
			f.refused(t, 400, f.post("/v1/topics/par/children?"+q, `{"child":"kid"}`), strings.Split(q, "=")[0])
		}
	})
	t.Run("body over 1 MiB", func(t *testing.T) {
		big := `{"child":"kid","start":"` + strings.Repeat("s", 1<<20) + `"}`
		f.refused(t, http.StatusRequestEntityTooLarge, f.attach("par", big))
		f.refused(t, http.StatusRequestEntityTooLarge, func(t testing.TB) biAnswer {
			return biDoChunked(t, f.n, "POST", "/v1/topics/par/children", "application/json", []byte(big))
		})
	})
	// Remote children: every refusal is a clean 4xx that
	// makes no link and never echoes the password.
	t.Run("remote", func(t *testing.T) {
		const secret = "s3cr3t-pw"
		remote := func(url, extra string) string {
			return `{"url":"` + url + `","topic":"orders","username":"u","password":"` + secret + `"` + extra + `}`
		}
		for _, c := range []struct {
			body     string
			status   int
			contains string
		}{
			{`{"child":"kid-dr","remote":` + remote("ftp://127.0.0.1:9", "") + `}`, 400, "http"},
			{`{"child":"kid-dr","remote":` + remote("http://127.0.0.1:9/v1", "") + `}`, 400, "scheme://host"},
			{`{"child":"kid-dr","remote":` + remote("http://127.0.0.1:9", `,"verify":false`) + `}`, 400, "verify"},
			{`{"child":"kid-dr","remote":{"url":"http://127.0.0.1:9","username":"u","password":"` + secret + `"}}`, 400, "remote.topic"},
			{`{"child":"kid-dr","remote":{"url":"http://127.0.0.1:9","topic":"orders","username":"u"}}`, 400, "both"},
			{`{"child":"kid-dr","remote":` + remote("http://127.0.0.1:9", "") + `,"start":"yesterday"}`, 400, "start"},
			{`{"child":"kid-dr","remote":` + remote("http://127.0.0.1:9", "") + `,"delay_ms":1000}`, 400, "delay"},
			{`{"child":"kid","start":"attach"}`, 400, "remote"},
			{`{"child":"kid","remote":` + remote("http://127.0.0.1:9", "") + `}`, 409, `topic "kid" already exists here`},
		} {
			before := f.take(t)
			a := f.attach("par", c.body)(t)
			biWantError(t, a, c.status, c.contains)
			if strings.Contains(string(a.body), secret) {
				t.Errorf("the answer echoes the password: %v", a)
			}
			f.unchanged(t, before)
			biAbsent(t, f.n, "kid-dr")
		}
		// Accepted: the answer, the listing and the describe never show
		// the credentials; the link is not a topic; a detach ends it.
		a := f.attach("par", `{"child":"kid-dr","remote":`+remote("http://127.0.0.1:9", "")+`,"start":"oldest"}`)(t)
		biWantStatus(t, a, http.StatusOK)
		// The answer describes the link (its target and state), not a
		// topic full of zeros, and warns of credentials in plaintext.
		var link struct {
			Remote   struct{ URL, Topic string } `json:"remote"`
			State    string                      `json:"state"`
			Warnings []string                    `json:"warnings"`
		}
		if r := biChParseAttached(t, a); r.Name != "par" || r.Child != "kid-dr" || len(r.AttachOffsets) != 3 ||
			json.Unmarshal(a.body, &link) != nil || link.Remote.URL != "http://127.0.0.1:9" || link.Remote.Topic != "orders" ||
			link.State != "running" || len(link.Warnings) != 1 || !strings.Contains(link.Warnings[0], "plaintext") {
			t.Fatalf("remote attach answer: %v", a)
		}
		list := biDo(t, f.n, "GET", "/v1/topics/par/children", "", nil)
		biWantStatus(t, list, http.StatusOK)
		for _, b := range [][]byte{a.body, list.body} {
			if bytes.Contains(b, []byte(secret)) || !bytes.Contains(b, []byte(`"url":"http://127.0.0.1:9"`)) {
				t.Fatalf("remote child shown with its password or without its url: %s", b)
			}
		}
		if !bytes.Contains(list.body, []byte(`"name":"kid-dr"`)) || !bytes.Contains(list.body, []byte(`"recovery_point"`)) {
			t.Fatalf("listing: %s", list.body)
		}
		biAbsent(t, f.n, "kid-dr")
		biWantError(t, biDo(t, f.n, "POST", "/v1/topics/kid-dr/produce", "text/plain", []byte("x")), http.StatusNotFound)
		biWantStatus(t, biDo(t, f.n, "DELETE", "/v1/topics/par/children/kid-dr", "", nil), http.StatusNoContent)
		if list := biDo(t, f.n, "GET", "/v1/topics/par/children", "", nil); bytes.Contains(list.body, []byte("kid-dr")) {
			t.Fatalf("detached remote child still listed: %s", list.body)
		}
	})
}

// attachAccepted makes, breaks and remakes links, so the refusals above
// are never a route that refuses everything.
func (f *biCh) attachAccepted(t *testing.T) {
	// hw has records on two of its three partitions: the attach point
	// is each partition's committed high watermark at attach time.
	f.fixture(t, `{"name":"hw","partitions":3}`)
	biWantStatus(t, biDo(t, f.n, "POST", "/v1/topics/hw/produce/batch", "application/json",
		[]byte(`{"records":[{"partition":0,"payload":"a"},{"partition":0,"payload":"b"},{"partition":1,"payload":"c"}]}`)),
		http.StatusAccepted)
	biWaitHWMs(t, f.n, "hw", []uint64{2, 1, 0})
	f.fixture(t, `{"name":"hw-a","partitions":2}`)
	f.fixture(t, `{"name":"hw-d","partitions":3}`)

	a := f.attach("hw", `{"child":"hw-a"}`)(t)
	biWantStatus(t, a, http.StatusOK)
	r := biChParseAttached(t, a)
	if r.Name != "hw" || r.Child != "hw-a" || !slices.Equal(r.Children, []string{"hw-a"}) || r.Parent != "" ||
		!slices.Equal(r.AttachOffsets, []uint64{2, 1, 0}) || r.DelayMs == nil || *r.DelayMs != 0 || r.Partitions != 3 {
		t.Fatalf("attach answer: %v", a)
	}
	if d := f.record(t, "hw-a"); d.Role != "child" || d.Parent != "hw" || d.AttachEpoch != r.AttachEpoch ||
		!slices.Equal(d.AttachOffsets, r.AttachOffsets) {
		t.Fatalf("describe after attach disagrees with the attach answer: %+v vs %+v", d, r)
	}
	if p := f.record(t, "hw"); p.Role != "parent" || !slices.Equal(p.Children, []string{"hw-a"}) {
		t.Fatalf("parent after attach: %+v", p)
	}
	firstEpoch := r.AttachEpoch

	a = f.attach("hw", `{"child":"hw-d","delay_ms":1000}`)(t)
	biWantStatus(t, a, http.StatusOK)
	d := biChParseAttached(t, a)
	if d.Child != "hw-d" || !slices.Equal(d.Children, []string{"hw-a", "hw-d"}) || d.AttachEpoch == firstEpoch ||
		!slices.Equal(d.AttachOffsets, []uint64{2, 1, 0}) || d.DelayMs == nil || *d.DelayMs != 1000 {
		t.Fatalf("delay attach answer: %v", a)
	}
	if dc := f.record(t, "hw-d"); dc.Role != "child" || dc.Parent != "hw" || dc.AttachEpoch != d.AttachEpoch ||
		dc.FanoutDelayMs == nil || *dc.FanoutDelayMs != 1000 {
		t.Fatalf("describe of the delay child disagrees with the attach answer: %+v vs %+v", dc, d)
	}
	l := f.listing(t, "hw")
	ca, okA := l.child("hw-a")
	cd, okD := l.child("hw-d")
	if len(l.Children) != 2 || !okA || !okD || ca.AttachEpoch != firstEpoch || *ca.DelayMs != 0 ||
		cd.AttachEpoch != d.AttachEpoch || *cd.DelayMs != 1000 {
		t.Fatalf("listing after two attaches: %+v", l)
	}
	f.settled(t, "hw")

	// Detach, then re-attach: a fresh epoch and the new attach point.
	f.refused(t, 404, f.detach("hw", "hw-x"), "hw-x")
	before := biHWMs(t, f.n, "hw-a")
	if a := f.detach("hw", "hw-a")(t); a.status != http.StatusNoContent || len(a.body) != 0 {
		t.Fatalf("detach: want 204 with an empty body: %v", a)
	}
	if r := f.record(t, "hw-a"); r.Role != "standalone" || r.Parent != "" || r.AttachEpoch != "" || r.AttachOffsets != nil {
		t.Fatalf("detached child: %+v", r)
	}
	if _, ok := f.listing(t, "hw").child("hw-a"); ok {
		t.Fatal("the detached child is still listed")
	}
	if got := biHWMs(t, f.n, "hw-a"); !slices.Equal(got, before) {
		t.Errorf("the detached child lost or gained data: %v -> %v", before, got)
	}
	f.refused(t, 404, f.detach("hw", "hw-a"), "hw-a")
	biWantStatus(t, biDo(t, f.n, "POST", "/v1/topics/hw/produce?partition=2", "application/octet-stream", []byte("d")), http.StatusAccepted)
	biWaitHWMs(t, f.n, "hw", []uint64{2, 1, 1})
	// The delay child (attached at [2 1 0], same partition count) gets
	// the new record on partition 2 a second later.
	biWaitHWMs(t, f.n, "hw-d", []uint64{0, 0, 1})
	a = f.attach("hw", `{"child":"hw-a"}`)(t)
	biWantStatus(t, a, http.StatusOK)
	r2 := biChParseAttached(t, a)
	if !biChEpochRe.MatchString(r2.AttachEpoch) || r2.AttachEpoch == firstEpoch || !slices.Equal(r2.AttachOffsets, []uint64{2, 1, 1}) {
		t.Fatalf("re-attach must get a new epoch (first %s) at the new attach point [2 1 1]: %v", firstEpoch, a)
	}
	if c, ok := f.listing(t, "hw").child("hw-a"); !ok || c.AttachEpoch != r2.AttachEpoch {
		t.Fatalf("listing after re-attach: %+v", c)
	}
	f.settled(t, "hw")

	// The accepted boundaries next to the refused ones.
	t.Run("retention forever takes the longest delay", func(t *testing.T) {
		f.fixture(t, `{"name":"forever-d","partitions":1}`)
		a := f.attach("forever", `{"child":"forever-d","delay_ms":31536000000}`)(t)
		biWantStatus(t, a, http.StatusOK)
		if r := biChParseAttached(t, a); r.DelayMs == nil || *r.DelayMs != biChMaxDelayMs || r.Name != "forever" || r.Child != "forever-d" {
			t.Fatalf("%v", a)
		}
	})
	t.Run("retention 1 h + 1 ms takes a 1 ms delay", func(t *testing.T) {
		f.fixture(t, `{"name":"floor-d","partitions":1}`)
		a := f.attach("floor", `{"child":"floor-d","delay_ms":1}`)(t)
		biWantStatus(t, a, http.StatusOK)
		if r := biChParseAttached(t, a); r.DelayMs == nil || *r.DelayMs != 1 || r.Name != "floor" || r.Child != "floor-d" {
			t.Fatalf("%v", a)
		}
	})
	t.Run("retention 1 h takes a child without delay", func(t *testing.T) {
		f.fixture(t, `{"name":"par-p","partitions":1}`)
		a := f.attach("par", `{"child":"par-p","delay_ms":0}`)(t)
		biWantStatus(t, a, http.StatusOK)
		if r := biChParseAttached(t, a); r.DelayMs == nil || *r.DelayMs != 0 || r.Name != "par" || r.Child != "par-p" || len(r.AttachOffsets) != 3 {
			t.Fatalf("%v", a)
		}
	})
	t.Run("compatible schema", func(t *testing.T) {
		// The parent's schema is an additive evolution of the child's
		// (same document): accepted.
		f.fixture(t, `{"name":"skid-ok","partitions":1,"schema":`+biSchema+`}`)
		biWantStatus(t, f.attach("spar", `{"child":"skid-ok"}`)(t), http.StatusOK)
	})
	for _, p := range []string{"hw", "forever", "floor", "par", "spar"} {
		f.settled(t, p)
	}
}

// listRefused sends every client error of GET /v1/topics/{parent}/children.
func (f *biCh) listRefused(t *testing.T) {
	f.refused(t, 404, func(t testing.TB) biAnswer { return biDo(t, f.n, "GET", "/v1/topics/nopar/children", "", nil) },
		"nopar", "does not exist")
	for _, name := range biChBadPathNames {
		t.Run("bad name "+name[:min(len(name), 12)], func(t *testing.T) {
			f.refused(t, 400, func(t testing.TB) biAnswer {
				return biDo(t, f.n, "GET", "/v1/topics/"+name+"/children", "", nil)
			}, "topic name")
		})
	}
	t.Run("unknown query parameter", func(t *testing.T) {
		for _, q := range []string{"limit=5", "child=par-c"} {
			f.refused(t, 400, func(t testing.TB) biAnswer {
				return biDo(t, f.n, "GET", "/v1/topics/par/children?"+q, "", nil)
			}, strings.Split(q, "=")[0])
		}
	})
}

// detachRefused sends every client error of DELETE
// /v1/topics/{parent}/children/{child}.
func (f *biCh) detachRefused(t *testing.T) {
	cases := []struct {
		name, parent, child string
		status              int
		contains            []string
	}{
		{"parent missing", "nopar", "par-c", 404, []string{"nopar", "does not exist"}},
		{"child missing", "par", "nokid", 404, []string{"nokid"}},
		{"child is plain", "par", "kid", 404, []string{"kid", "not a child"}},
		{"child of another parent", "other", "par-c", 404, []string{"par-c", "not a child"}},
		{"child is the parent", "par", "par", 404, []string{"par"}},
		{"reversed", "par-c", "par", 404, []string{"par"}},
		{"parent is plain", "kid", "par-c", 404, []string{"par-c"}},
	}
	for _, name := range biChBadPathNames {
		cases = append(cases,
			struct {
				name, parent, child string
				status              int
				contains            []string
			}{"bad parent name " + name[:min(len(name), 12)], name, "par-c", 400, []string{"topic name"}},
			struct {
				name, parent, child string
				status              int
				contains            []string
			}{"bad child name " + name[:min(len(name), 12)], "par", name, 400, []string{"topic name"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { f.refused(t, c.status, f.detach(c.parent, c.child), c.contains...) })
	}
	t.Run("unknown query parameter", func(t *testing.T) {
		f.refused(t, 400, func(t testing.TB) biAnswer {
			return biDo(t, f.n, "DELETE", "/v1/topics/par/children/par-c?force=true", "", nil)
		}, "force")
	})
	t.Run("no child in the path", func(t *testing.T) {
		f.refused(t, 405, func(t testing.TB) biAnswer { return biDo(t, f.n, "DELETE", "/v1/topics/par/children", "", nil) }, "it takes GET, HEAD, POST")
		f.refused(t, 404, func(t testing.TB) biAnswer { return biDo(t, f.n, "DELETE", "/v1/topics/par/children/", "", nil) })
	})
}
