package fanout

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// target is another cluster's batch produce, in memory: it records what
// it accepted and answers with whatever status the test sets.
type target struct {
	srv      *httptest.Server
	mu       sync.Mutex
	status   int    // 0: 202
	body     string // answer body for a non-202
	got      []gotRecord
	requests int
	auth     []string
}

type gotRecord struct {
	key     string
	keyed   bool
	payload []byte
	headers map[string]string
	msgID   string
}

func newTarget(t *testing.T) *target {
	tg := &target{}
	tg.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.mu.Lock()
		defer tg.mu.Unlock()
		tg.requests++
		u, p, _ := r.BasicAuth()
		tg.auth = append(tg.auth, u+":"+p)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/topics/mirror/produce/batch" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusTeapot)
			return
		}
		if tg.status != 0 {
			w.WriteHeader(tg.status)
			fmt.Fprint(w, tg.body)
			return
		}
		var in struct {
			Records []struct {
				Key           *string           `json:"key"`
				PayloadBase64 string            `json:"payload_base64"`
				Headers       map[string]string `json:"headers"`
				MsgID         string            `json:"msg_id"`
			} `json:"records"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rec := range in.Records {
			b, err := base64.StdEncoding.DecodeString(rec.PayloadBase64)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			g := gotRecord{payload: b, headers: rec.Headers, msgID: rec.MsgID}
			if rec.Key != nil {
				g.key, g.keyed = *rec.Key, true
			}
			tg.got = append(tg.got, g)
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, `{"accepted":%d}`, len(in.Records))
	}))
	t.Cleanup(tg.srv.Close)
	return tg
}

func (tg *target) set(status int, body string) {
	tg.mu.Lock()
	tg.status, tg.body = status, body
	tg.mu.Unlock()
}

func (tg *target) records() []gotRecord {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]gotRecord(nil), tg.got...)
}

func (n *node) attachRemote(parent, child, url, start string) meta.Topic {
	n.t.Helper()
	remote := fmt.Sprintf(`{"url":%q,"topic":"mirror","username":"replicator","password":"s3cret-pass"}`, url)
	if _, err := n.e.Attach(n.ctx(), parent, AttachRequest{Child: child, Remote: json.RawMessage(remote), Start: start}); err != nil {
		n.t.Fatal(err)
	}
	c, _ := n.meta.Topic(child)
	return c
}

// rule lanes by key: every record committed after the attach reaches the
// target through its batch produce, keys and payload bytes intact, in order
// per key, with the link's credentials; the listing shows the target
// without them, the state and the recovery point.
func TestRemoteChildCopiesInOrderPerKey(t *testing.T) {
	tg := newTarget(t)
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("orders", 3, 0)
	n.commit("orders", 0, "before") // before the attach: never sent
	child := n.attachRemote("orders", "orders-dr", tg.srv.URL, "")
	if child.Partitions != 0 || child.Remote == nil || len(child.AttachOffsets) != 3 {
		t.Fatalf("remote child record: %+v", child)
	}
	n.e.Start()
	for round := 0; round < 5; round++ {
		for p := 0; p < 3; p++ {
			keys := []string{"a", "b", "", fmt.Sprintf("k%d", round)}
			recs := make([]storage.Record, len(keys))
			for i, k := range keys {
				recs[i] = storage.Record{Key: []byte(k), Payload: []byte(fmt.Sprintf("p%d|%s|%d", p, k, round))}
				if k == "" {
					recs[i].Key = nil
				}
			}
			if err := commitLocal(n.b, n.ctx(), "orders", p, recs); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, 10*time.Second, "60 records at the target", func() bool { return len(tg.records()) >= 60 })
	got := tg.records()
	if len(got) != 60 {
		t.Fatalf("target got %d records, want exactly 60 (no failures, so no duplicates)", len(got))
	}
	counts := map[string]int{}    // per parent partition and key
	lastRound := map[string]int{} // per parent partition and key: the round last seen, in arrival order
	for _, r := range got {
		if bytes.Contains(r.payload, []byte("before")) {
			t.Fatal("a record from before the attach was sent")
		}
		f := strings.Split(string(r.payload), "|")
		if len(f) != 3 {
			t.Fatalf("payload %q", r.payload)
		}
		key, round := f[1], 0
		fmt.Sscanf(f[2], "%d", &round)
		if r.keyed != (key != "") || r.key != key {
			t.Fatalf("key %q (keyed %v) for payload %q", r.key, r.keyed, r.payload)
		}
		pk := f[0] + "/" + key
		if last, seen := lastRound[pk]; seen && round <= last {
			t.Fatalf("%s: round %d arrived after round %d: order per key lost", pk, round, last)
		}
		lastRound[pk] = round
		counts[pk]++
	}
	if counts["p0/a"] != 5 || counts["p2/"] != 5 || counts["p1/k4"] != 1 {
		t.Fatalf("per partition and key counts: %v", counts)
	}
	for _, a := range tg.auth {
		if a != "replicator:s3cret-pass" {
			t.Fatalf("target saw credentials %q", a)
		}
	}
	// The cursors advance right after the target's 202s.
	var v ChildrenView
	waitFor(t, 10*time.Second, "the cursors past every record", func() bool {
		var err error
		v, err = n.e.Children("orders")
		return err == nil && v.Children[0].LagMessages == 0
	})
	js, _ := json.Marshal(v)
	if bytes.Contains(js, []byte("s3cret")) || bytes.Contains(js, []byte("replicator")) {
		t.Fatalf("the listing shows credentials: %s", js)
	}
	c := v.Children[0]
	if c.Remote == nil || c.Remote.Topic != "mirror" || c.State != StateRunning || len(c.RecoveryPoint) != 3 || c.LagMessages != 0 {
		t.Fatalf("listing: %s", js)
	}
	for _, rp := range c.RecoveryPoint {
		if rp.NextOffset != 20+boolInt(rp.Partition == 0) || rp.CommittedAtMs == 0 {
			t.Fatalf("recovery point %+v", rp)
		}
	}
}

func boolInt(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// rules held records bounded, refusal stops the link: while the target
// refuses, the link shows why, retries forever and the cursor does not pass
// the refused records; once the target accepts again everything arrives —
// duplicates allowed, never a gap.
func TestRemoteChildStatesAndNoGap(t *testing.T) {
	tg := newTarget(t)
	n := newNode(t, Config{Linger: time.Millisecond, Backoff: 10 * time.Millisecond})
	n.createTopic("orders", 1, 0)
	n.attachRemote("orders", "orders-dr", tg.srv.URL, "")
	n.e.Start()
	n.commit("orders", 0, "a", "b")
	waitFor(t, 10*time.Second, "the first 2 sent", func() bool { return len(tg.records()) == 2 })

	for _, tc := range []struct {
		status int
		body   string
		state  string
	}{
		{http.StatusServiceUnavailable, `{"error":"not ready"}`, StateRetrying},
		{http.StatusUnauthorized, `{"error":"missing or wrong credentials"}`, StateAuthFailed},
		{http.StatusNotFound, `{"error":"topic \"mirror\" does not exist"}`, StateTargetMissing},
		{http.StatusBadRequest, `{"error":"record 0: payload is not valid against the schema","index":0}`, StateRejected},
	} {
		tg.set(tc.status, tc.body)
		n.commit("orders", 0, "c")
		waitFor(t, 10*time.Second, "state "+tc.state, func() bool {
			v, _ := n.e.Children("orders")
			return v.Children[0].State == tc.state
		})
		if n.m.RemoteLinkState.WithLabelValues("orders", "orders-dr", tc.state) == nil {
			t.Fatal("no state series")
		}
		v, _ := n.e.Children("orders")
		if rp := v.Children[0].RecoveryPoint[0]; rp.NextOffset != 2 {
			t.Fatalf("%s: the cursor passed refused records: next_offset %d", tc.state, rp.NextOffset)
		}
	}
	tg.set(0, "")
	waitFor(t, 10*time.Second, "all 6 at the target", func() bool { return len(tg.records()) >= 6 })
	seen := map[string]bool{}
	for _, r := range tg.records() {
		seen[r.key] = true
	}
	if !seen["a"] || !seen["b"] || !seen["c"] || len(seen) != 3 {
		t.Fatalf("target keys %v", seen)
	}
	waitFor(t, 10*time.Second, "state running again", func() bool {
		v, _ := n.e.Children("orders")
		return v.Children[0].State == StateRunning && v.Children[0].RecoveryPoint[0].NextOffset == 6
	})
}

// Each status a target answers gives its link state, line by line of
// remoteStates, through the committer's wrapping; any other answer, or
// none, is retried.
func TestRemoteStateOfEachStatus(t *testing.T) {
	for status, want := range map[int]string{
		http.StatusUnauthorized:          StateAuthFailed,
		http.StatusForbidden:             StateAuthFailed,
		http.StatusNotFound:              StateTargetMissing,
		http.StatusBadRequest:            StateRejected,
		http.StatusRequestEntityTooLarge: StateRejected,
		http.StatusConflict:              StateRejected,
		http.StatusTooManyRequests:       StateRetrying,
		http.StatusInternalServerError:   StateRetrying,
		http.StatusServiceUnavailable:    StateRetrying,
	} {
		err := fmt.Errorf("target http://dr.example: %w", &client.APIError{Status: status, Message: "no"})
		if got := remoteState(err); got != want {
			t.Errorf("a target's %d: state %q, want %q", status, got, want)
		}
	}
	if got := remoteState(fmt.Errorf("target http://dr.example: %w", context.DeadlineExceeded)); got != StateRetrying {
		t.Errorf("no answer: state %q, want %q", got, StateRetrying)
	}
}

func TestRemoteAttachRules(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("orders", 1, 0)
	n.createTopic("local", 1, 0)
	ok := `{"url":"http://dr.example:7942","topic":"mirror","username":"u","password":"p"}`
	for _, tc := range []struct {
		name   string
		req    AttachRequest
		status int
		says   string
	}{
		{"no url", AttachRequest{Child: "dr", Remote: json.RawMessage(`{"topic":"mirror"}`)}, 400, "url"},
		{"ftp url", AttachRequest{Child: "dr", Remote: json.RawMessage(`{"url":"ftp://h","topic":"mirror"}`)}, 400, "http"},
		{"url with a path", AttachRequest{Child: "dr", Remote: json.RawMessage(`{"url":"http://h/x","topic":"mirror"}`)}, 400, "scheme://host"},
		{"url with credentials", AttachRequest{Child: "dr", Remote: json.RawMessage(`{"url":"http://u:p@h","topic":"mirror"}`)}, 400, "scheme://host"},
		{"bad topic", AttachRequest{Child: "dr", Remote: json.RawMessage(`{"url":"http://h","topic":"a/b"}`)}, 400, "remote.topic"},
		{"user without password", AttachRequest{Child: "dr", Remote: json.RawMessage(`{"url":"http://h","topic":"m","username":"u"}`)}, 400, "both"},
		{"unknown field", AttachRequest{Child: "dr", Remote: json.RawMessage(`{"url":"http://h","topic":"m","tls":true}`)}, 400, "tls"},
		{"bad start", AttachRequest{Child: "dr", Remote: json.RawMessage(ok), Start: "now"}, 400, "start"},
		{"delay", AttachRequest{Child: "dr", Remote: json.RawMessage(ok), DelayMs: 1000}, 400, "delay"},
		{"start without remote", AttachRequest{Child: "local", Start: "oldest"}, 400, "remote"},
		{"name of a local topic", AttachRequest{Child: "local", Remote: json.RawMessage(ok)}, 409, "exists"},
		{"no parent", AttachRequest{Child: "dr", Remote: json.RawMessage(ok)}, 404, "nope"},
	} {
		parent := "orders"
		if tc.name == "no parent" {
			parent = "nope"
		}
		_, err := n.e.Attach(n.ctx(), parent, tc.req)
		if ae, ok := apierr.From(err); !ok || ae.Status != tc.status || !strings.Contains(ae.Message, tc.says) {
			t.Errorf("%s: %v, want %d mentioning %q", tc.name, err, tc.status, tc.says)
		}
	}
	if _, ok := n.meta.Topic("dr"); ok {
		t.Fatal("a refused attach left a record")
	}
	// start=oldest records each partition's oldest offset; a detach ends
	// the remote child entirely (its name is free again).
	n.commit("orders", 0, "x", "y")
	c := n.attachRemote("orders", "dr", "http://dr.example:7942", "oldest")
	if c.AttachOffsets[0] != 0 {
		t.Fatalf("start=oldest: attach offsets %v", c.AttachOffsets)
	}
	if err := n.e.Detach(n.ctx(), "orders", "dr"); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.meta.Topic("dr"); ok {
		t.Fatal("a detached remote child's record is still there")
	}
	c = n.attachRemote("orders", "dr", "http://dr.example:7942", "attach")
	if c.AttachOffsets[0] != 2 {
		t.Fatalf("start=attach: attach offsets %v", c.AttachOffsets)
	}
}

// logLines collects what the engine logs, for tests of what an operator
// reads there.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logLines) WithGroup(string) slog.Handler            { return l }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	return nil
}

func (l *logLines) matching(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// rule refusal stops the link: a record the target refuses is named by its
// parent offset in every retry round, not only the first: the held copy
// keeps the offsets. Before the fix the copy made after the first round
// dropped them, and every later round named offset 0.
func TestRemoteRejectedNamesTheOffsetInEveryRound(t *testing.T) {
	tg := newTarget(t)
	logs := &logLines{}
	n := newNode(t, Config{Linger: time.Millisecond, Backoff: 10 * time.Millisecond})
	n.e.cfg.Logger = slog.New(logs)
	n.createTopic("orders", 1, 0)
	n.attachRemote("orders", "orders-dr", tg.srv.URL, "")
	n.e.Start()
	n.commit("orders", 0, "a", "b")
	waitFor(t, 10*time.Second, "the first 2 sent", func() bool { return len(tg.records()) == 2 })
	tg.set(http.StatusBadRequest, `{"error":"record 0: payload is not valid against the schema","index":0}`)
	n.commit("orders", 0, "c") // parent offset 2
	var rounds []string
	waitFor(t, 10*time.Second, "several refused rounds", func() bool {
		rounds = logs.matching("state=" + StateRejected)
		return len(rounds) >= 4
	})
	for i, line := range rounds {
		if !strings.Contains(line, "refuses the record at parent offset 2:") {
			t.Fatalf("round %d does not name offset 2: %s", i, line)
		}
	}
}
