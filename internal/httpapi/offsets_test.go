package httpapi

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Every partition answers its first offset at the time; one that cannot
// answer now says why in its entry, and the rest still answer.
func TestOffsetsAnswerEveryPartition(t *testing.T) {
	e := newEnv(t, secured)
	at := time.UnixMilli(1_700_000_003_000)
	var got offsetsView
	w := e.do(request{method: "GET", target: "/v1/topics/orders/offsets?time=1700000003000", user: "consumer:pw"})
	if decode(t, w, &got); w.Code != 200 || got.Topic != "orders" || got.TimeMs != at.UnixMilli() || len(got.Partitions) != 3 {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	for p, ps := range got.Partitions {
		switch {
		case ps.Partition != p:
			t.Fatalf("entry %d is partition %d", p, ps.Partition)
		case p == 2 && (ps.Offset != nil || !strings.Contains(ps.Error, "not served by this node")):
			t.Fatalf("partition 2 not served here: %+v", ps)
		case p < 2 && (ps.Offset == nil || *ps.Offset != uint64(p*10+3) || ps.Error != ""):
			t.Fatalf("partition %d: %+v", p, ps)
		}
	}
	// The RFC 3339 form is the same moment.
	w = e.do(request{method: "GET", target: "/v1/topics/orders/offsets?partition=1&time=" + url.QueryEscape(at.UTC().Format(time.RFC3339)), user: "consumer:pw"})
	if decode(t, w, &got); w.Code != 200 || len(got.Partitions) != 1 || *got.Partitions[0].Offset != 13 {
		t.Fatalf("pinned, RFC 3339: %d %s", w.Code, w.Body.String())
	}
	// A pinned partition that cannot answer is the answer.
	if w := e.do(request{method: "GET", target: "/v1/topics/orders/offsets?partition=2&time=0", user: "consumer:pw"}); w.Code != 503 {
		t.Fatalf("pinned partition not served: %d %s", w.Code, w.Body.String())
	}
}

// A duration means that long before now.
func TestOffsetsDurationIsAgo(t *testing.T) {
	e := newEnv(t)
	before := time.Now().Add(-10 * time.Minute)
	if w := e.do(request{method: "GET", target: "/v1/topics/orders/offsets?partition=0&time=10m"}); w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	after := time.Now().Add(-10 * time.Minute)
	var ms int64
	if _, err := fmt.Sscanf(e.rec.last("OffsetAtTime"), "OffsetAtTime orders 0 %d", &ms); err != nil {
		t.Fatal(err, e.rec.last("OffsetAtTime"))
	}
	if ms < before.UnixMilli() || ms > after.UnixMilli() {
		t.Fatalf("10m ago asked for %d, want %d..%d", ms, before.UnixMilli(), after.UnixMilli())
	}
}

// Bad input is refused with 400 naming it, and nothing is asked.
func TestOffsetsRefusals(t *testing.T) {
	e := newEnv(t, secured)
	future := time.Now().Add(time.Hour).UnixMilli()
	for _, c := range []struct {
		target, user string
		code         int
		says         string
	}{
		{"/v1/topics/orders/offsets", "consumer:pw", 400, "time is required"},
		{"/v1/topics/orders/offsets?time=soon", "consumer:pw", 400, "time"},
		{"/v1/topics/orders/offsets?time=-5", "consumer:pw", 400, "time"},
		{fmt.Sprintf("/v1/topics/orders/offsets?time=%d", future), "consumer:pw", 400, "future"},
		{"/v1/topics/orders/offsets?time=0&partition=3", "consumer:pw", 400, "out of range"},
		{"/v1/topics/orders/offsets?time=0&partition=x", "consumer:pw", 400, "partition"},
		{"/v1/topics/orders/offsets?time=0&offset=1", "consumer:pw", 400, "offset"},
		{"/v1/topics/mine/offsets?time=0", "consumer:pw", 403, ""},
		{"/v1/topics/nope/offsets?time=0", "root:pw", 404, "does not exist"},
	} {
		before := e.rec.count("OffsetAtTime")
		w := e.do(request{method: "GET", target: c.target, user: c.user})
		if msg := errorBody(t, w); w.Code != c.code || !strings.Contains(msg, c.says) {
			t.Errorf("%s: %d %q, want %d saying %q", c.target, w.Code, msg, c.code, c.says)
		}
		if e.rec.count("OffsetAtTime") != before {
			t.Errorf("%s: the data plane was asked", c.target)
		}
	}
}

// In a cluster each partition answers from its owner, with the time made
// absolute; an owner's refusal is that partition's error.
func TestOffsetsAskEachOwner(t *testing.T) {
	e := newEnv(t, clustered)
	e.cl.owners["orders/1"] = "n2"
	e.cl.owners["orders/2"] = "n3"
	e.cl.answers["n2"] = ForwardResponse{Status: 200, Body: []byte(`{"topic":"orders","time_ms":5,"partitions":[{"partition":1,"offset":77}]}`)}
	e.cl.answers["n3"] = ForwardResponse{Status: 503, Body: []byte(`{"error":"partition 2 of \"orders\" is being moved; retry"}`)}
	var got offsetsView
	w := e.do(request{method: "GET", target: "/v1/topics/orders/offsets?time=10m"})
	if decode(t, w, &got); w.Code != 200 || len(got.Partitions) != 3 {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	if p := got.Partitions[1]; p.Offset == nil || *p.Offset != 77 {
		t.Fatalf("partition 1 from n2: %+v", p)
	}
	if p := got.Partitions[2]; p.Offset != nil || !strings.Contains(p.Error, "being moved") {
		t.Fatalf("partition 2 from n3: %+v", p)
	}
	s := e.cl.sentTo("n2")
	want := url.Values{"partition": {"1"}, "time": {fmt.Sprint(got.TimeMs)}}.Encode()
	if s.Method != "GET" || s.Path != "/v1/topics/orders/offsets" || s.RawQuery != want {
		t.Fatalf("sent to n2: %+v, want query %s", s, want)
	}
}
