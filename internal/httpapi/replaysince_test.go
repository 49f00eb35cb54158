package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/meta"
)

const sinceBase = int64(1_700_000_000_000)

// replayLogs are three partitions whose commit times interleave, with
// ties across partitions (offsets are indexes).
func replayLogs(e *env) {
	b := sinceBase
	e.plane.since.times = map[int][]int64{
		0: {b + 10, b + 20, b + 30},
		1: {b + 10, b + 15, b + 30, b + 40},
		2: {b + 5, b + 25},
	}
}

// allInOrder is every record of replayLogs by (time, partition, offset).
var allInOrder = []string{"2:0", "0:0", "1:0", "1:1", "0:1", "2:1", "0:2", "1:2", "1:3"}

type replayAnswer struct {
	Messages []struct {
		Partition     int             `json:"partition"`
		Offset        uint64          `json:"offset"`
		Payload       json.RawMessage `json:"payload"`
		TimestampMs   int64           `json:"timestamp_ms"`
		ReceiptHandle *string         `json:"receipt_handle"`
	} `json:"messages"`
	NextPageToken string `json:"next_page_token"`
	CaughtUp      bool   `json:"caught_up"`
}

func (a replayAnswer) ids() []string {
	out := []string{}
	for _, m := range a.Messages {
		out = append(out, fmt.Sprintf("%d:%d", m.Partition, m.Offset))
	}
	return out
}

func (e *env) replay(query, user string) (replayAnswer, int, string) {
	e.t.Helper()
	w := e.do(request{method: "GET", target: "/v1/topics/orders/replay?" + query, user: user})
	var a replayAnswer
	if w.Code == 200 {
		decode(e.t, w, &a)
		for _, m := range a.Messages {
			if m.ReceiptHandle != nil {
				e.t.Fatalf("a replay answered a receipt handle: %s", w.Body.String())
			}
		}
	}
	return a, w.Code, w.Body.String()
}

// Every partition's records come merged by commit time, ties by partition
// then offset, and reading changes nothing.
func TestReplaySinceMergesByCommitTime(t *testing.T) {
	e := newEnv(t, secured)
	replayLogs(e)
	a, code, body := e.replay(fmt.Sprintf("since=%d", sinceBase), "consumer:pw")
	if code != 200 || !slices.Equal(a.ids(), allInOrder) || !a.CaughtUp || a.NextPageToken == "" {
		t.Fatalf("%d %v caught_up=%v: %s", code, a.ids(), a.CaughtUp, body)
	}
	if m := a.Messages[0]; m.TimestampMs != sinceBase+5 || string(m.Payload) != `"p2o0"` {
		t.Fatalf("first record: %+v", m)
	}
	// Each partition started at the time (from=-), never elsewhere.
	for p := range 3 {
		if !slices.Contains(e.rec.calls, fmt.Sprintf("ReplaySince orders %d since=%d from=- max=100", p, sinceBase)) {
			t.Errorf("partition %d was not read from the time: %v", p, e.rec.calls)
		}
	}
	if m := e.rec.mutations(); len(m) != 0 {
		t.Fatalf("a replay changed state: %v", m)
	}
	// A later time, and one partition.
	a, _, body = e.replay(fmt.Sprintf("since=%d", sinceBase+12), "consumer:pw")
	if want := []string{"1:1", "0:1", "2:1", "0:2", "1:2", "1:3"}; !slices.Equal(a.ids(), want) {
		t.Fatalf("since +12ms: %v, want %v (%s)", a.ids(), want, body)
	}
	a, _, body = e.replay(fmt.Sprintf("since=%d&partition=1", sinceBase+12), "consumer:pw")
	if want := []string{"1:1", "1:2", "1:3"}; !slices.Equal(a.ids(), want) || !a.CaughtUp {
		t.Fatalf("partition 1: %v, want %v (%s)", a.ids(), want, body)
	}
}

// Paging with the token reads every record once, in the same order, and
// the last page says it caught up; a caught-up token goes on with what is
// committed later.
func TestReplaySinceTokenRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name   string
		query  string
		budget int
	}{{"max=2", "max=2", 0}, {"budget", "max=100", 9}, {"max=1", "max=1", 0}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			replayLogs(e)
			e.plane.since.budget = c.budget
			var got []string
			q := fmt.Sprintf("since=%d&%s", sinceBase, c.query)
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatalf("no end after %d pages: %v", pages, got)
				}
				a, code, body := e.replay(q, "")
				if code != 200 || len(a.Messages) == 0 && !a.CaughtUp {
					t.Fatalf("page %d: %d %s", pages, code, body)
				}
				if c.budget > 0 && len(a.Messages) > 2 {
					t.Fatalf("page %d passes the budget: %v", pages, a.ids())
				}
				got = append(got, a.ids()...)
				q = c.query + "&page_token=" + url.QueryEscape(a.NextPageToken) // since is in the token
				if a.CaughtUp {
					break
				}
			}
			if !slices.Equal(got, allInOrder) {
				t.Fatalf("pages read %v, want %v", got, allInOrder)
			}
			e.plane.since.times[2] = append(e.plane.since.times[2], sinceBase+50)
			a, _, body := e.replay(q, "")
			if !slices.Equal(a.ids(), []string{"2:2"}) || !a.CaughtUp {
				t.Fatalf("after catching up: %s", body)
			}
		})
	}
}

// A partition added after the token was issued is read from the token's
// time; a pinned token continues its partition.
func TestReplaySinceTokenOverGrownTopic(t *testing.T) {
	e := newEnv(t)
	replayLogs(e)
	e.plane.topics["orders"] = tokenTopic(2, 0)
	a, _, body := e.replay(fmt.Sprintf("since=%d", sinceBase+12), "")
	if want := []string{"1:1", "0:1", "0:2", "1:2", "1:3"}; !slices.Equal(a.ids(), want) {
		t.Fatalf("two partitions: %v, want %v (%s)", a.ids(), want, body)
	}
	e.plane.topics["orders"] = tokenTopic(3, 0)
	a, _, body = e.replay("page_token="+a.NextPageToken, "")
	if want := []string{"2:1"}; !slices.Equal(a.ids(), want) {
		t.Fatalf("the grown partition: %v, want %v (%s)", a.ids(), want, body)
	}
	a, _, _ = e.replay(fmt.Sprintf("since=%d&partition=1&max=1", sinceBase), "")
	a, _, body = e.replay("max=1&page_token="+a.NextPageToken, "")
	if want := []string{"1:1"}; !slices.Equal(a.ids(), want) {
		t.Fatalf("pinned token: %v, want %v (%s)", a.ids(), want, body)
	}
}

// Bad input, a malformed token included, is refused with 400 naming it,
// and no partition is read.
func TestReplaySinceRefusals(t *testing.T) {
	e := newEnv(t, secured)
	replayLogs(e)
	pinned := sinceToken{parts: []tokenPart{{partition: 1, next: 3}}}.encode()
	all := sinceToken{all: true, parts: []tokenPart{{0, 1}, {1, 1}, {2, 1}}}.encode()
	raw := func(b ...byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	for _, c := range []struct {
		query, user string
		code        int
		says        string
	}{
		{"", "consumer:pw", 400, "since is required"},
		{"since=soon", "consumer:pw", 400, "since"},
		{"since=0&max=0", "consumer:pw", 400, "max"},
		{"since=0&max=1001", "consumer:pw", 400, "max"},
		{"since=0&partition=3", "consumer:pw", 400, "out of range"},
		{"since=0&offset=1", "consumer:pw", 400, "offset"},
		{"page_token=!!!", "consumer:pw", 400, "page_token is malformed"},
		{"page_token=", "consumer:pw", 400, "page_token is malformed"},
		{"page_token=" + raw(2, 0, 0, 0, 1, 0, 0), "consumer:pw", 400, "page_token is malformed"},       // version 2
		{"page_token=" + raw(1, 0, 0, 0, 1, 0), "consumer:pw", 400, "page_token is malformed"},          // cut short
		{"page_token=" + raw(1, 0, 0, 0, 1, 0, 0, 9), "consumer:pw", 400, "page_token is malformed"},    // trailing byte
		{"page_token=" + raw(1, 1, 0, 0, 2, 1, 0, 0, 0), "consumer:pw", 400, "page_token is malformed"}, // all, out of order
		{"page_token=" + raw(1, 0, 0, 0, 2, 0, 0, 1, 0), "consumer:pw", 400, "page_token is malformed"}, // pinned to two
		{"page_token=" + pinned + "=", "consumer:pw", 400, "page_token is malformed"},
		{"page_token=" + pinned + "&partition=0", "consumer:pw", 400, "page_token continues partition 1"},
		{"page_token=" + all + "&partition=0", "consumer:pw", 400, "leave partition out"},
		{"page_token=" + all + "&since=soon", "consumer:pw", 400, "since"},
		{"since=0", "producer:pw", 403, ""},
	} {
		before := e.rec.count("ReplaySince")
		w := e.do(request{method: "GET", target: "/v1/topics/orders/replay?" + c.query, user: c.user})
		if msg := errorBody(t, w); w.Code != c.code || !strings.Contains(msg, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.query, w.Code, msg, c.code, c.says)
		}
		if e.rec.count("ReplaySince") != before {
			t.Errorf("%s: a partition was read", c.query)
		}
	}
	if w := e.do(request{method: "GET", target: "/v1/topics/nope/replay?since=0", user: "root:pw"}); w.Code != 404 {
		t.Errorf("unknown topic: %d %s", w.Code, w.Body.String())
	}
}

func tokenTopic(partitions int, incarnation uint64) meta.Topic {
	return meta.Topic{Name: "orders", Partitions: partitions, Incarnation: incarnation}
}

// A token of a topic that was deleted and created again under the same
// name is refused: its offsets mean nothing in the new topic.
func TestReplaySinceTokenOfRecreatedTopic(t *testing.T) {
	e := newEnv(t)
	replayLogs(e)
	e.plane.topics["orders"] = tokenTopic(3, 41)
	a, code, body := e.replay("since=0&max=1", "")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if _, code, body = e.replay("page_token="+a.NextPageToken, ""); code != 200 {
		t.Fatalf("same topic: %d %s", code, body)
	}
	e.plane.topics["orders"] = tokenTopic(3, 97)
	before := e.rec.count("ReplaySince")
	if _, code, body = e.replay("page_token="+a.NextPageToken, ""); code != 400 || !strings.Contains(body, "earlier topic") {
		t.Fatalf("re-created topic: %d %s", code, body)
	}
	if e.rec.count("ReplaySince") != before {
		t.Fatal("a partition of the new topic was read")
	}
}

// In a cluster each partition is read on its owner (the time made
// absolute, later pages by a token of that partition alone) and merged
// here, the owner's message objects passed on byte for byte; an owner's
// refusal fails the page, since a merge without it would be wrong.
func TestReplaySinceReadsEachOwner(t *testing.T) {
	e := newEnv(t, clustered)
	replayLogs(e)
	e.cl.owners["orders/1"] = "n2"
	n2next := sinceToken{sinceMs: uint64(sinceBase), parts: []tokenPart{{partition: 1, next: 8}}}.encode()
	owned := `{"topic":"orders","partition":1,"offset":7,"payload":{"a":  1},"timestamp":1700000000,"timestamp_ms":1700000000012}`
	e.cl.answers["n2"] = ForwardResponse{Status: 200, ContentType: "application/json",
		Body: []byte(`{"messages":[` + owned + `],"next_page_token":"` + n2next + `","caught_up":true}`)}
	w := e.do(request{method: "GET", target: fmt.Sprintf("/v1/topics/orders/replay?since=%d", sinceBase)})
	var a replayAnswer
	if decode(t, w, &a); w.Code != 200 || !slices.Equal(a.ids(), []string{"2:0", "0:0", "1:7", "0:1", "2:1", "0:2"}) {
		t.Fatalf("%d %v %s", w.Code, a.ids(), w.Body.String())
	}
	if !strings.Contains(w.Body.String(), owned) {
		t.Fatalf("the owner's record was not passed on as it was: %s", w.Body.String())
	}
	s := e.cl.sentTo("n2")
	want := url.Values{"partition": {"1"}, "max": {"100"}, "since": {fmt.Sprint(sinceBase)}}.Encode()
	if s.Method != "GET" || s.Path != "/v1/topics/orders/replay" || s.RawQuery != want || s.User != "" {
		t.Fatalf("sent to n2: %+v, want query %s", s, want)
	}
	if e.rec.count("ReplaySince orders 1") != 0 {
		t.Fatal("partition 1 was read here")
	}
	// The next page asks n2 from its own token.
	e.do(request{method: "GET", target: "/v1/topics/orders/replay?page_token=" + a.NextPageToken})
	q, _ := url.ParseQuery(e.cl.sentTo("n2").RawQuery)
	tok, err := parseSinceToken(q.Get("page_token"))
	if err != nil || tok.all || tok.parts[0] != (tokenPart{partition: 1, next: 8}) || tok.sinceMs != uint64(sinceBase) || q.Has("since") {
		t.Fatalf("second page sent to n2: %v %+v %v", q, tok, err)
	}
	// An owner that cannot serve fails the page with its status.
	e.cl.answers["n2"] = ForwardResponse{Status: 503, Body: []byte(`{"error":"partition 1 of \"orders\" is being moved; retry"}`)}
	if w := e.do(request{method: "GET", target: "/v1/topics/orders/replay?since=0"}); w.Code != 503 || !strings.Contains(errorBody(t, w), "being moved") {
		t.Fatalf("owner refused: %d %s", w.Code, w.Body.String())
	}
	// An answer that cannot be read is not guessed at.
	e.cl.answers["n2"] = ForwardResponse{Status: 200, Body: []byte(`{"messages":[],"next_page_token":"x"}`)}
	if w := e.do(request{method: "GET", target: "/v1/topics/orders/replay?since=0"}); w.Code != 503 || !strings.Contains(errorBody(t, w), "cannot read") {
		t.Fatalf("unreadable owner answer: %d %s", w.Code, w.Body.String())
	}
}

// A forwarded request reads here whoever owns the partition (no loops).
func TestReplaySinceForwardedIsServedHere(t *testing.T) {
	e := newEnv(t, clustered)
	replayLogs(e)
	e.cl.owners["orders/1"] = "n2"
	w := e.doCtx(request{method: "GET", target: fmt.Sprintf("/v1/topics/orders/replay?since=%d&partition=1", sinceBase)}, Forwarded(t.Context(), "root"))
	var a replayAnswer
	if decode(t, w, &a); w.Code != 200 || len(a.Messages) != 4 || len(e.cl.sent) != 0 {
		t.Fatalf("%d %s, forwarded %d", w.Code, w.Body.String(), len(e.cl.sent))
	}
}
