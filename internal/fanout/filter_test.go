package fanout

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// Tests of rule filtered links.

// attachFiltered attaches child under parent with a filter.
func (n *node) attachFiltered(parent, child, policy, scope string) {
	n.t.Helper()
	if _, err := n.e.Attach(n.ctx(), parent, AttachRequest{Child: child, Filter: json.RawMessage(policy), FilterScope: scope}); err != nil {
		n.t.Fatal(err)
	}
}

// kinded is a record whose header kind is kind ("" for no headers), its
// payload naming its place: "<tag>:<kind>".
func kinded(tag, kind string) storage.Record {
	r := storage.Record{Payload: []byte(tag + ":" + kind)}
	if kind != "" {
		r.Headers = []header.Header{{Name: "kind", Value: kind}}
	}
	return r
}

// payloads is what topic/0 holds, as payload strings in offset order.
func (n *node) payloads(topic string) []string {
	n.t.Helper()
	var out []string
	for _, r := range n.read(topic, 0) {
		out = append(out, string(r.Payload))
	}
	return out
}

// filteredTotal reads narad_fanout_filtered_messages_total{parent,child}.
func filteredTotal(t testing.TB, n *node, parent, child string) float64 {
	t.Helper()
	return counterValue(t, n, "narad_fanout_filtered_messages_total", parent, child)
}

// waitCursorAt waits for the link's cursor file on src/0 to hold next,
// and for the engine to say so (the file is readable once written, before
// its fdatasync returns and the cursor notes its new position).
func (n *node) waitCursorAt(child string, next uint64) {
	n.t.Helper()
	c, _ := n.meta.Topic(child)
	path := n.dir + "/topics/src/p00000/" + CursorFileName(child)
	waitFor(n.t, 10*time.Second, fmt.Sprintf("the cursor file at %d", next), func() bool {
		st, ok, err := ReadCursorFile(path)
		if err != nil || !ok || st.Epoch != c.AttachEpoch || st.NextOffset != next {
			return false
		}
		for _, cp := range n.e.CursorPositions("src", 0) {
			if cp.Child == child && cp.NextOffset == next {
				return true
			}
		}
		return false
	})
}

// A filtered link copies exactly the records its filter matches, in
// order; the cursor advances past the others as past copied ones — a
// slab of which none matches included — and counts them, in the listing
// and the metric.
func TestFilteredLinkCopiesExactlyTheMatchingRecords(t *testing.T) {
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	n.attachFiltered("src", "dst", `{"kind": ["keep", {"prefix": "also-"}]}`, "")
	n.e.Start()

	var recs []storage.Record
	var want []string
	for i := range 40 {
		kind := []string{"keep", "drop", "", "also-yes", "also"}[i%5]
		r := kinded(fmt.Sprint(i), kind)
		recs = append(recs, r)
		if kind == "keep" || kind == "also-yes" {
			want = append(want, string(r.Payload))
		}
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, recs); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 40)
	if got := n.payloads("dst"); !slices.Equal(got, want) {
		t.Fatalf("the child holds\n%v\nwant exactly the matching records in order\n%v", got, want)
	}

	// A slab none of whose records matches: nothing is copied, the
	// cursor still passes it.
	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{kinded("x", "drop"), kinded("y", "")}); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 42)
	if got := n.payloads("dst"); len(got) != len(want) {
		t.Fatalf("after a slab that matches nothing the child holds %d records, want %d", len(got), len(want))
	}
	skipped := uint64(42 - len(want))
	v, err := n.e.Children("src")
	if err != nil || len(v.Children) != 1 {
		t.Fatalf("listing: %+v %v", v, err)
	}
	c := v.Children[0]
	if c.Filtered != skipped || c.FilterScope != "headers" || string(c.Filter) != `{"kind":["keep",{"prefix":"also-"}]}` || c.LagMessages != 0 {
		t.Fatalf("listing entry %+v (filter %s), want filtered %d, the canonical filter, lag 0", c, c.Filter, skipped)
	}
	if got := filteredTotal(t, n, "src", "dst"); got != float64(skipped) {
		t.Fatalf("narad_fanout_filtered_messages_total = %v, want %d", got, skipped)
	}
}

// The payload scope matches fields of a JSON payload; a payload that is
// not a JSON object matches nothing.
func TestFilteredLinkMatchesThePayload(t *testing.T) {
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	n.attachFiltered("src", "dst", `{"order": {"total": [{"numeric": [">", 100]}]}}`, "payload")
	n.e.Start()
	var recs []storage.Record
	for _, p := range []string{`{"order":{"total":150}}`, `{"order":{"total":50}}`, `not json`, `{"order":[{"total":7},{"total":101}]}`, `[1]`} {
		recs = append(recs, storage.Record{Payload: []byte(p)})
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, recs); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 5)
	want := []string{`{"order":{"total":150}}`, `{"order":[{"total":7},{"total":101}]}`}
	if got := n.payloads("dst"); !slices.Equal(got, want) {
		t.Fatalf("the child holds %q, want %q", got, want)
	}
}

// A filter change applies from the next slab: a slab read under the old
// filter commits what the old filter kept, even when the change lands
// while its commit is in flight; the next slab is read under the new one.
// Removing the filter copies everything again.
func TestFilterChangeAppliesFromTheNextSlab(t *testing.T) {
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	n.attachFiltered("src", "dst", `{"kind": ["a"]}`, "")
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	n.fc.mu.Lock()
	n.fc.onTry = func(string, int, []storage.Record) {
		once.Do(func() { close(entered); <-release })
	}
	n.fc.mu.Unlock()
	n.e.Start()

	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{kinded("1", "a"), kinded("2", "b")}); err != nil {
		t.Fatal(err)
	}
	<-entered // the first slab's commit is in flight, under {"kind": ["a"]}
	if _, err := n.e.PatchChild(n.ctx(), "src", "dst", PatchRequest{Filter: json.RawMessage(`{"kind": ["b"]}`)}); err != nil {
		t.Fatal(err)
	}
	close(release)
	n.waitCursorAt("dst", 2)
	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{kinded("3", "a"), kinded("4", "b")}); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 4)
	if got, want := n.payloads("dst"), []string{"1:a", "4:b"}; !slices.Equal(got, want) {
		t.Fatalf("the child holds %q, want %q: the first slab under the old filter, the next under the new", got, want)
	}

	v, err := n.e.PatchChild(n.ctx(), "src", "dst", PatchRequest{Filter: json.RawMessage(`null`)})
	if err != nil || v.Filter != nil || v.FilterScope != "" {
		t.Fatalf("removing the filter: %+v %v", v, err)
	}
	if c, _ := n.meta.Topic("dst"); c.FanoutFilter != nil {
		t.Fatalf("the record keeps filter %s after null", c.FanoutFilter)
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{kinded("5", "a"), kinded("6", "")}); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 6)
	if got, want := n.payloads("dst"), []string{"1:a", "4:b", "5:a", "6:"}; !slices.Equal(got, want) {
		t.Fatalf("without a filter the child holds %q, want %q", got, want)
	}
}

// A crash between a filtered slab's commit and its cursor advance loses
// no matching record: the cursor file cannot be written (errorfs), the
// engine goes down with the slab committed and the file behind it, and
// the restarted engine copies the slab again from the file — matching
// records possibly twice, never a gap, and never a record the filter
// does not match.
func TestFilteredLinkCrashLosesNoMatchingRecord(t *testing.T) {
	f := newFaultNode(t)
	f.attachFiltered("src", "dst", `{"kind": ["keep"]}`, "")
	child, _ := f.meta.Topic("dst")
	f.e.Start()
	if err := commitLocal(f.b, f.ctx(), "src", 0, []storage.Record{kinded("0", "drop"), kinded("1", "keep")}); err != nil {
		t.Fatal(err)
	}
	f.waitDurable(t, child.AttachEpoch, 2)

	in := f.fs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: CursorFileName("dst"), Err: syscall.EIO})
	if err := commitLocal(f.b, f.ctx(), "src", 0, []storage.Record{kinded("2", "keep"), kinded("3", "drop"), kinded("4", "keep"), kinded("5", "")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the slab committed and its advance failing", func() bool {
		return in.Fired() >= 2 && len(f.read("dst", 0)) == 3
	})
	f.e.Close() // down with the advance undone
	if st, _, _ := f.durable(); st.NextOffset != 2 {
		t.Fatalf("the cursor file moved to %d while its writes failed", st.NextOffset)
	}
	in.Remove()
	f.e = f.newEngine(f.e.cfg)
	t.Cleanup(f.e.Close)
	f.e.Start()
	f.waitDurable(t, child.AttachEpoch, 6)

	got := f.payloads("dst")
	want := []string{"1:keep", "2:keep", "4:keep"}
	if !slices.Equal(firstOfEach(got), want) {
		t.Fatalf("after the crash the child holds %q: want every matching record (%q), duplicates allowed, no gap", got, want)
	}
	for _, p := range got {
		if !strings.HasSuffix(p, ":keep") {
			t.Fatalf("a record the filter does not match was copied: %q", p)
		}
	}
}

// firstOfEach is got without its repeats (a replayed slab's copies),
// each record where it first arrived.
func firstOfEach(got []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range got {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// A remote child's cursor filters the same way: the target gets only
// the matching records.
func TestRemoteChildIsFilteredToo(t *testing.T) {
	tg := newTarget(t)
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("src", 1, 0)
	remote := fmt.Sprintf(`{"url":%q,"topic":"mirror"}`, tg.srv.URL)
	av, err := n.e.Attach(n.ctx(), "src", AttachRequest{Child: "dr", Remote: json.RawMessage(remote), Filter: json.RawMessage(`{"kind":["keep"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(av.Filter) != `{"kind":["keep"]}` || av.FilterScope != "headers" {
		t.Fatalf("attach answer filter %s scope %q", av.Filter, av.FilterScope)
	}
	n.e.Start()
	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{kinded("1", "keep"), kinded("2", "drop"), kinded("3", "keep")}); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dr", 3)
	var got []string
	for _, r := range tg.records() {
		got = append(got, string(r.payload))
	}
	if want := []string{"1:keep", "3:keep"}; !slices.Equal(got, want) {
		t.Fatalf("the target got %q, want %q", got, want)
	}
}

// A malformed filter is refused as invalid, naming the place in the
// policy, before anything is looked up, and nothing is stored; so is a
// patch without a filter, or of a link that does not exist.
func TestMalformedFilterIsRefusedAndNothingStored(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	for _, c := range []struct {
		req  AttachRequest
		want string
	}{
		{AttachRequest{Child: "dst", Filter: json.RawMessage(`{"n": [{"numeric": [">", "x"]}]}`)}, "filter.n[0].numeric[1]"},
		{AttachRequest{Child: "dst", Filter: json.RawMessage(`{"a": {"b": ["x"]}}`)}, "filter.a"},
		{AttachRequest{Child: "dst", Filter: json.RawMessage(`["x"]`)}, "filter: want a JSON object"},
		{AttachRequest{Child: "dst", Filter: json.RawMessage(`{"a": ["x"]}`), FilterScope: "body"}, `filter_scope "body"`},
		{AttachRequest{Child: "dst", FilterScope: "payload"}, "needs a filter"},
		{AttachRequest{Child: "nosuch", Filter: json.RawMessage(`{"a": []}`)}, "filter.a"}, // 400 before 404
	} {
		_, err := n.e.Attach(n.ctx(), "src", c.req)
		if !errors.Is(err, refusal.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("attach with filter %s scope %q: %v, want invalid naming %q", c.req.Filter, c.req.FilterScope, err, c.want)
		}
	}
	if d, _ := n.meta.Topic("dst"); d.Parent != "" || d.FanoutFilter != nil {
		t.Fatalf("a refused attach stored %+v", d)
	}

	n.attachFiltered("src", "dst", `{"kind": ["a"]}`, "")
	before, _ := n.meta.Topic("dst")
	for _, c := range []struct {
		parent, child string
		req           PatchRequest
		want          error
	}{
		{"src", "dst", PatchRequest{Filter: json.RawMessage(`{"kind": [{"prefix": 1}]}`)}, refusal.ErrInvalid},
		{"src", "dst", PatchRequest{}, refusal.ErrInvalid},
		{"src", "dst", PatchRequest{Filter: json.RawMessage(`null`), FilterScope: "payload"}, refusal.ErrInvalid},
		{"src", "nosuch", PatchRequest{Filter: json.RawMessage(`{"k": ["v"]}`)}, refusal.ErrNotFound},
		{"nosuch", "dst", PatchRequest{Filter: json.RawMessage(`{"k": ["v"]}`)}, refusal.ErrTopicNotFound},
	} {
		if _, err := n.e.PatchChild(n.ctx(), c.parent, c.child, c.req); !errors.Is(err, c.want) {
			t.Errorf("patch %s/%s %+v: %v, want %v", c.parent, c.child, c.req, err, c.want)
		}
	}
	if after, _ := n.meta.Topic("dst"); string(after.FanoutFilter) != string(before.FanoutFilter) || after.Version != before.Version {
		t.Fatalf("a refused patch changed the link: %s → %s", before.FanoutFilter, after.FanoutFilter)
	}
	// The empty policy matches everything: it is no filter.
	v, err := n.e.PatchChild(n.ctx(), "src", "dst", PatchRequest{Filter: json.RawMessage(`{}`)})
	if err != nil || v.Filter != nil {
		t.Fatalf("patch to {}: %+v %v", v, err)
	}
}

// The race-build check of the filter's selection fires on a slab that
// keeps a record the filter does not match, or drops one it does.
func TestInvariantFilteredSlabKeepsTheMatching(t *testing.T) {
	recs := []storage.Record{{Offset: 1}, {Offset: 3}}
	if err := keptError([]uint64{1, 3}, recs); err != nil {
		t.Fatalf("the matching records kept: %v", err)
	}
	if err := keptError([]uint64{1, 2, 3}, recs); err == nil || !strings.Contains(err.Error(), "filtered links") {
		t.Fatalf("a matching record dropped: %v", err)
	}
	if err := keptError([]uint64{3}, recs); err == nil {
		t.Fatal("a record the filter does not match kept: no error")
	}
}

// A child created attached takes its link's filter in the same command;
// a malformed one is refused naming its place and creates nothing, and a
// create without a parent cannot name one.
func TestCreateChildWithFilter(t *testing.T) {
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("src", 1, 0)
	bad := topic.CreateRequest{Name: "dst", Partitions: 1, Parent: "src", FanoutFilter: json.RawMessage(`{"kind": [{"suffix": 3}]}`)}
	if _, err := n.e.CreateChild(n.ctx(), bad, ""); !errors.Is(err, refusal.ErrInvalid) || !strings.Contains(err.Error(), "filter.kind[0].suffix") {
		t.Fatalf("create with a malformed filter: %v", err)
	}
	if _, ok := n.meta.Topic("dst"); ok {
		t.Fatal("a refused create made the topic")
	}
	loose := topic.CreateRequest{Name: "loose", Partitions: 1, FanoutFilter: json.RawMessage(`{"kind": ["a"]}`)}
	if _, err := n.b.CreateTopic(n.ctx(), loose, ""); err == nil || !strings.Contains(err.Error(), "need parent") {
		t.Fatalf("create with a filter and no parent: %v", err)
	}
	good := topic.CreateRequest{Name: "dst", Partitions: 1, Parent: "src", FanoutFilter: json.RawMessage(`{"kind": ["a"]}`)}
	if _, err := n.e.CreateChild(n.ctx(), good, ""); err != nil {
		t.Fatal(err)
	}
	n.e.Start()
	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{kinded("1", "a"), kinded("2", "b")}); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 2)
	if got, want := n.payloads("dst"), []string{"1:a"}; !slices.Equal(got, want) {
		t.Fatalf("the child created with a filter holds %q, want %q", got, want)
	}
}
