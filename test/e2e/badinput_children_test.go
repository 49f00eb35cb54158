package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// biChNoIDSchema is a child's own schema without the "id" property:
// biSchema (which requires "id") is not an additive evolution of it, so a
// parent holding biSchema cannot take a child holding this one.
const biChNoIDSchema = `{"type":"object","properties":{"name":{"type":"string"}}}`

// biChMaxDelayMs is one year, the longest delay (docs/concepts.md, "Fan-out
// children").
const biChMaxDelayMs = 31_536_000_000

var biChEpochRe = regexp.MustCompile(`^[0-9a-f]{16}$`)

// biChRecord is the part of a topic record the link rules are about.
type biChRecord struct {
	Name          string   `json:"name"`
	Partitions    int      `json:"partitions"`
	RetentionMs   int64    `json:"retention_ms"`
	Role          string   `json:"role"`
	Parent        string   `json:"parent"`
	AttachEpoch   string   `json:"attach_epoch"`
	AttachOffsets []uint64 `json:"attach_offsets"`
	FanoutDelayMs *int64   `json:"fanout_delay_ms"`
	Children      []string `json:"children"`
}

// biChAttached is the attach answer: the parent's record (docs/http-api.md,
// as the reference answers), whose attach_epoch and attach_offsets are the
// new link's, with the link's child and delay beside them.
type biChAttached struct {
	biChRecord
	Child   string `json:"child"`
	DelayMs *int64 `json:"delay_ms"`
}

func biChParseAttached(t testing.TB, a biAnswer) biChAttached {
	t.Helper()
	var r biChAttached
	if err := json.Unmarshal(a.body, &r); err != nil {
		t.Fatalf("not an attach answer (%v): %v", err, a)
	}
	if r.Role != "parent" || !slices.Contains(r.Children, r.Child) || r.Child == "" || !biChEpochRe.MatchString(r.AttachEpoch) {
		t.Fatalf("attach answer is not the parent's record with the new link: %v", a)
	}
	return r
}

type biChChild struct {
	Name            string   `json:"name"`
	DelayMs         *int64   `json:"delay_ms"`
	AttachEpoch     string   `json:"attach_epoch"`
	LagMessages     *uint64  `json:"lag_messages"`
	LagComplete     *bool    `json:"lag_complete"`
	DroppedMessages *uint64  `json:"dropped_messages"`
	DueLagSeconds   *float64 `json:"due_lag_seconds"`
}

type biChListing struct {
	Parent   string      `json:"parent"`
	Children []biChChild `json:"children"`
}

func (l biChListing) child(name string) (biChChild, bool) {
	for _, c := range l.Children {
		if c.Name == name {
			return c, true
		}
	}
	return biChChild{}, false
}

func biChParseRecord(t testing.TB, a biAnswer) biChRecord {
	t.Helper()
	var r biChRecord
	if err := json.Unmarshal(a.body, &r); err != nil {
		t.Fatalf("not a topic record (%v): %v", err, a)
	}
	return r
}

// biChConcurrent sends the requests at the same moment and returns the
// answers in order. It never calls t.Fatal off the test goroutine.
func biChConcurrent(t testing.TB, n *node, reqs ...[3]string) []biAnswer {
	t.Helper()
	out := make([]biAnswer, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest(r[0], n.url(r[1]), strings.NewReader(r[2]))
			if err != nil {
				errs[i] = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			<-gate
			resp, err := biHTTP.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			out[i], errs[i] = biAnswer{status: resp.StatusCode, body: b, hdr: resp.Header, what: r[0] + " " + r[1]}, err
		}()
	}
	close(gate)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s %s: %v", reqs[i][0], reqs[i][1], err)
		}
	}
	return out
}

// biChOneWins asserts exactly one answer is want and every other a JSON
// 409, and returns the index of the winner.
func biChOneWins(t testing.TB, as []biAnswer, want int) int {
	t.Helper()
	winner := -1
	for i, a := range as {
		if a.status == want {
			if winner >= 0 {
				t.Fatalf("two racing requests both succeeded:\n%v\n%v", as[winner], a)
			}
			winner = i
			continue
		}
		biWantError(t, a, http.StatusConflict)
	}
	if winner < 0 {
		t.Fatalf("no racing request succeeded: %v", as)
	}
	return winner
}

var biChLong250 = strings.Repeat("n", 250)

// biChBadPathNames are topic names the router must refuse in a path
// segment (escaped as sent); the last is one character too long.
var biChBadPathNames = []string{"a%20b", "%C3%BC", "a%2Fb", "..%2Fx", "a%00b", "a%5Cb", "%2e%2e", biChLong250}

// biCh is the one node TestBadInputChildren talks to and the topics it
// watches. Its subtests share it and run in order: the fixtures made
// early are the ones the later subtests attach, detach and refuse.
type biCh struct {
	n *node
	// watch is every topic whose describe and children listing a refusal
	// must leave byte-identical. The 108 children of the last subtest are
	// left out (the topic list still covers them).
	watch []string
}

func (f *biCh) create(t testing.TB, body string) biChRecord {
	t.Helper()
	a := biDo(t, f.n, "POST", "/v1/topics", "application/json", []byte(body))
	biWantStatus(t, a, http.StatusCreated)
	return biChParseRecord(t, a)
}

func (f *biCh) fixture(t testing.TB, body string) biChRecord {
	t.Helper()
	r := f.create(t, body)
	f.watch = append(f.watch, r.Name)
	return r
}

func (f *biCh) post(path, body string) func(t testing.TB) biAnswer {
	return func(t testing.TB) biAnswer {
		return biDo(t, f.n, "POST", path, "application/json", []byte(body))
	}
}

func (f *biCh) attach(parent, body string) func(t testing.TB) biAnswer {
	return f.post("/v1/topics/"+parent+"/children", body)
}

func (f *biCh) createReq(body string) func(t testing.TB) biAnswer { return f.post("/v1/topics", body) }

func (f *biCh) detach(parent, child string) func(t testing.TB) biAnswer {
	return func(t testing.TB) biAnswer {
		return biDo(t, f.n, "DELETE", "/v1/topics/"+parent+"/children/"+child, "", nil)
	}
}

func (f *biCh) listRaw(t testing.TB, parent string) string {
	t.Helper()
	a := biDo(t, f.n, "GET", "/v1/topics/"+parent+"/children", "", nil)
	biWantStatus(t, a, http.StatusOK)
	return string(a.body)
}

func (f *biCh) listing(t testing.TB, parent string) biChListing {
	t.Helper()
	var l biChListing
	if err := json.Unmarshal([]byte(f.listRaw(t, parent)), &l); err != nil {
		t.Fatalf("children listing of %s: %v", parent, err)
	}
	if l.Parent != parent || l.Children == nil {
		t.Fatalf("children listing of %s: parent %q, children %v", parent, l.Parent, l.Children)
	}
	for _, c := range l.Children {
		if c.DelayMs == nil || c.LagMessages == nil || c.LagComplete == nil || c.DroppedMessages == nil ||
			!biChEpochRe.MatchString(c.AttachEpoch) {
			t.Fatalf("children listing of %s: incomplete entry %+v", parent, c)
		}
		if (*c.DelayMs > 0) != (c.DueLagSeconds != nil) {
			t.Errorf("children listing of %s: %s has delay_ms %d and due_lag_seconds %v (only delay children carry it)",
				parent, c.Name, *c.DelayMs, c.DueLagSeconds)
		}
	}
	return l
}

func (f *biCh) record(t testing.TB, topic string) biChRecord {
	t.Helper()
	return biChParseRecord(t, biDo(t, f.n, "GET", "/v1/topics/"+topic, "", nil))
}

// settled waits until every child of parent is measured and caught up
// (delay children of up to 10 s included; longer delays never have a
// due record here): the listing and describes stop moving.
func (f *biCh) settled(t testing.TB, parent string) {
	t.Helper()
	eventually(t, 15*time.Second, "the children of "+parent+" to catch up", func() bool {
		for _, c := range f.listing(t, parent).Children {
			if !*c.LagComplete || (*c.DelayMs <= 10_000 && *c.LagMessages != 0) {
				return false
			}
		}
		return true
	})
}

type biChSnapshot struct {
	list     string
	describe map[string]string
	children map[string]string
}

func (f *biCh) take(t testing.TB) biChSnapshot {
	t.Helper()
	s := biChSnapshot{list: biListRaw(t, f.n), describe: map[string]string{}, children: map[string]string{}}
	for _, name := range f.watch {
		s.describe[name] = biDescribeRaw(t, f.n, name)
		s.children[name] = f.listRaw(t, name)
	}
	return s
}

func (f *biCh) unchanged(t testing.TB, before biChSnapshot) {
	t.Helper()
	after := f.take(t)
	if after.list != before.list {
		t.Errorf("topic list changed:\nbefore %s\nafter  %s", before.list, after.list)
	}
	for _, name := range f.watch {
		if b, ok := before.describe[name]; ok && after.describe[name] != b {
			t.Errorf("describe of %s changed:\nbefore %s\nafter  %s", name, b, after.describe[name])
		}
		if b, ok := before.children[name]; ok && after.children[name] != b {
			t.Errorf("children listing of %s changed:\nbefore %s\nafter  %s", name, b, after.children[name])
		}
	}
}

// refused sends one request that must be refused with status and a
// JSON error mentioning every contains, and checks nothing changed.
func (f *biCh) refused(t testing.TB, status int, send func(t testing.TB) biAnswer, contains ...string) string {
	t.Helper()
	before := f.take(t)
	msg := biWantError(t, send(t), status, contains...)
	f.unchanged(t, before)
	return msg
}

// noTopic asserts a refused create left neither a topic nor data.
func (f *biCh) noTopic(t testing.TB, name string) {
	t.Helper()
	biAbsent(t, f.n, name)
	for _, d := range biDirs(t, f.n) {
		if filepath.Base(d) == name {
			t.Errorf("a directory %s exists for the refused topic %s", d, name)
		}
	}
}

// TestBadInputChildren sends every client error of the fan-out children
// routes (attach, list, detach), of create-with-parent, of a parent's
// retention change under a delay child and of produce to a delay child to
// one node, and checks the answer (status, JSON error naming the problem)
// and that nothing changed: the topic list, the describe and the children
// listing of every watched topic are byte-for-byte what they were, so no
// link was made, broken or altered and no topic appeared. The accepted
// boundary values are exercised alongside, so a refusal is never just a
// route that refuses everything.
func TestBadInputChildren(t *testing.T) {
	f := &biCh{n: startNode(t)}

	// Fixtures. par keeps records 1 h exactly, the floor a delay child of
	// even 1 ms cannot meet; par-c is its (plain) child; other/other-c a
	// second link; kid a plain topic every refused attach names; spar has
	// a schema requiring "id", skid one without it; forever keeps records
	// forever; floor keeps them 1 h + 1 ms.
	f.fixture(t, `{"name":"par","partitions":3,"retention_ms":3600000}`)
	if r := f.fixture(t, `{"name":"par-c","parent":"par"}`); r.Role != "child" || r.Parent != "par" || r.Partitions != 3 {
		t.Fatalf("par-c: %+v", r)
	}
	f.fixture(t, `{"name":"other","partitions":1}`)
	f.fixture(t, `{"name":"other-c","parent":"other"}`)
	f.fixture(t, `{"name":"kid","partitions":3}`)
	f.fixture(t, `{"name":"spar","partitions":1,"schema":`+biSchema+`}`)
	f.fixture(t, `{"name":"skid","partitions":1,"schema":`+biChNoIDSchema+`}`)
	f.fixture(t, `{"name":"forever","partitions":1,"retention_ms":0}`)
	f.fixture(t, `{"name":"floor","partitions":1,"retention_ms":3600001}`)
	f.settled(t, "par")
	f.settled(t, "other")

	// The children routes themselves (badinput_children_routes_test.go).
	t.Run("attach", f.attachRefused)
	t.Run("attach accepted", f.attachAccepted)
	t.Run("list", f.listRefused)
	t.Run("detach", f.detachRefused)
	// The link rules seen from other routes and under races
	// (badinput_children_links_test.go).
	t.Run("create with parent", f.createWithParent)
	t.Run("schema of an attached child", f.attachedSchema)
	t.Run("parent retention under a delay child", f.parentRetention)
	t.Run("produce to children", f.produceToChildren)
	t.Run("races", f.races)
	// Last: 108 children make the parent full.
	t.Run("parent at 108 children", f.fullParent)
}
