package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// biMsg is a delivered record as the API shows it.
type biMsg struct {
	Topic         string          `json:"topic"`
	Partition     int             `json:"partition"`
	Offset        uint64          `json:"offset"`
	Payload       json.RawMessage `json:"payload"`
	ReceiptHandle string          `json:"receipt_handle"`
	DeliveryCount int             `json:"delivery_count"`
}

// biConsume does a queue consume with query q and returns what it got: nil
// on 204, the messages on 200 (single or max= form).
func biConsume(t testing.TB, n *node, topic, q string) []biMsg {
	t.Helper()
	a := biDo(t, n, "GET", "/v1/topics/"+topic+"/consume?"+q, "", nil)
	switch a.status {
	case http.StatusNoContent:
		if len(a.body) != 0 {
			t.Fatalf("204 with a body: %v", a)
		}
		return nil
	case http.StatusOK:
	default:
		t.Fatalf("consume: %v", a)
	}
	if strings.Contains(q, "max=") {
		var page struct {
			Messages []biMsg `json:"messages"`
		}
		if err := json.Unmarshal(a.body, &page); err != nil {
			t.Fatalf("consume: %v: %v", err, a)
		}
		return page.Messages
	}
	var m biMsg
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("consume: %v: %v", err, a)
	}
	return []biMsg{m}
}

func biAck(t testing.TB, n *node, topic, handle, extra string) biAnswer {
	t.Helper()
	return biDo(t, n, "POST", "/v1/topics/"+topic+"/ack?receipt_handle="+url.QueryEscape(handle)+extra, "", nil)
}

// TestBadInputConsumeAck sends every client error of consume and ack to
// one node while three records (one per partition) sit in a topic. The
// refused consumes must lease nothing (the first real consume afterwards
// gets all three, each on its first delivery); the refused acks must
// settle, extend or release nothing (frontiers stay, the records stay
// leased, and every real handle still acks 204 at the end).
func TestBadInputConsumeAck(t *testing.T) {
	n := startNode(t)
	biWantStatus(t, biDo(t, n, "POST", "/v1/topics", "application/json", []byte(`{"name":"c","partitions":3}`)), http.StatusCreated)
	biWantStatus(t, biDo(t, n, "POST", "/v1/topics/c/produce/batch", "application/json",
		[]byte(`{"records":[{"payload":"r0","partition":0},{"payload":"r1","partition":1},{"payload":"r2","partition":2}]}`)), http.StatusAccepted)
	biWaitHWMs(t, n, "c", []uint64{1, 1, 1})
	stats0 := biDescribeRaw(t, n, "c")

	// unchanged asserts describe of c (high watermarks and frontiers
	// included) is what it was.
	unchanged := func(t *testing.T, want string) {
		t.Helper()
		if got := biDescribeRaw(t, n, "c"); got != want {
			t.Errorf("c changed:\nbefore %s\nafter  %s", want, got)
		}
	}

	t.Run("consume", func(t *testing.T) {
		consume := func(topic, q string) func(t testing.TB) biAnswer {
			return func(t testing.TB) biAnswer { return biDo(t, n, "GET", "/v1/topics/"+topic+"/consume?"+q, "", nil) }
		}
		cases := []struct {
			name, topic, q string
			status         int
			contains       []string
		}{
			{"missing topic", "missing", "", 404, []string{"missing", "does not exist"}},
			{"missing topic with wait", "missing", "wait=5s", 404, []string{"missing"}},
			{"bad topic name", "..%2Fx", "", 400, []string{"topic name"}},
			{"partition=-1", "c", "partition=-1", 400, []string{"partition"}},
			{"partition=3", "c", "partition=3", 400, []string{"partition 3"}},
			{"partition=99", "c", "partition=99", 400, []string{"partition 99"}},
			{"partition=abc", "c", "partition=abc", 400, []string{"partition"}},
			{"partition empty", "c", "partition=", 400, []string{"partition"}},
			{"offset without partition", "c", "offset=0", 400, []string{"offset", "partition"}},
			{"offset=abc", "c", "partition=0&offset=abc", 400, []string{"offset"}},
			{"offset=-1", "c", "partition=0&offset=-1", 400, []string{"offset"}},
			{"offset with partition out of range", "c", "partition=3&offset=0", 400, []string{"partition 3"}},
			{"max=0", "c", "max=0", 400, []string{"max"}},
			{"max=1001", "c", "max=1001", 400, []string{"max"}},
			{"max=abc", "c", "max=abc", 400, []string{"max"}},
			{"max=-1", "c", "max=-1", 400, []string{"max"}},
			{"wait=abc", "c", "wait=abc", 400, []string{"wait"}},
			{"wait=-5", "c", "wait=-5", 400, []string{"wait"}},
			{"wait=-5s", "c", "wait=-5s", 400, []string{"wait"}},
			{"wait=5parsecs", "c", "wait=5parsecs", 400, []string{"wait"}},
			// A good parameter does not rescue a bad one.
			{"good max, bad wait", "c", "max=10&wait=abc", 400, []string{"wait"}},
			{"good partition, bad max", "c", "partition=0&max=0", 400, []string{"max"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				biWantError(t, consume(c.topic, c.q)(t), c.status, c.contains...)
				unchanged(t, stats0)
			})
		}
		t.Run("replay at or past the high watermark", func(t *testing.T) {
			for _, q := range []string{"partition=0&offset=1", "partition=1&offset=1&max=5", "partition=2&offset=18446744073709551615", "partition=0&offset=1&wait=100ms"} {
				a := biDo(t, n, "GET", "/v1/topics/c/consume?"+q, "", nil)
				biWantStatus(t, a, http.StatusNoContent)
				if len(a.body) != 0 {
					t.Errorf("204 with a body: %v", a)
				}
			}
			// A replay inside the log reads without leasing.
			if m := biConsume(t, n, "c", "partition=0&offset=0"); len(m) != 1 || string(m[0].Payload) != `"r0"` || m[0].ReceiptHandle != "" {
				t.Fatalf("replay of offset 0: %+v", m)
			}
			unchanged(t, stats0)
		})
	})

	// None of the above leased anything: one consume gets all three
	// records, each on its first delivery.
	msgs := biConsume(t, n, "c", "max=10")
	if len(msgs) != 3 {
		t.Fatalf("after the refused consumes, a consume got %d records, want 3: %+v", len(msgs), msgs)
	}
	handles := make([]string, 3)
	for _, m := range msgs {
		if m.DeliveryCount != 1 || m.Offset != 0 || string(m.Payload) != fmt.Sprintf(`"r%d"`, m.Partition) {
			t.Fatalf("unexpected delivery after the refused consumes: %+v", m)
		}
		handles[m.Partition] = m.ReceiptHandle
	}
	h0, h1, h2 := handles[0], handles[1], handles[2]
	// A handle for the same partition and offset with another nonce.
	parts := strings.Split(h0, ":")
	nonce, err := strconv.ParseUint(parts[2], 10, 64)
	if len(parts) != 3 || err != nil {
		t.Fatalf("handle %q is not partition:offset:nonce", h0)
	}
	h0forged := fmt.Sprintf("%s:%s:%d", parts[0], parts[1], nonce+1)
	h0future := fmt.Sprintf("%s:5:%d", parts[0], nonce)

	// The three records are leased: while that holds, a consume gets 204,
	// and describe (its in_flight included) stays as it is now.
	leased := biDescribeRaw(t, n, "c")
	held := func(t *testing.T) {
		t.Helper()
		if m := biConsume(t, n, "c", "max=10"); len(m) != 0 {
			t.Fatalf("a refused ack released or settled a lease: consume got %+v", m)
		}
		unchanged(t, leased)
	}
	held(t)

	t.Run("ack", func(t *testing.T) {
		cases := []struct {
			name     string
			send     func(t testing.TB) biAnswer
			status   int
			contains []string
		}{
			{"missing topic", func(t testing.TB) biAnswer { return biAck(t, n, "missing", h0, "") }, 404, []string{"missing"}},
			{"missing topic, batch", func(t testing.TB) biAnswer {
				return biDo(t, n, "POST", "/v1/topics/missing/ack", "application/json", biJSON(t, map[string]any{"receipt_handles": []string{h0}}))
			}, 404, []string{"missing"}},
			{"bad topic name", func(t testing.TB) biAnswer { return biAck(t, n, "..%2Fx", h0, "") }, 400, []string{"topic name"}},
			{"no handle, empty body", func(t testing.TB) biAnswer { return biDo(t, n, "POST", "/v1/topics/c/ack", "", nil) }, 400, []string{"receipt_handle"}},
			{"empty handle", func(t testing.TB) biAnswer { return biAck(t, n, "c", "", "") }, 400, []string{"receipt_handle"}},
			{"handle x", func(t testing.TB) biAnswer { return biAck(t, n, "c", "x", "") }, 400, []string{"receipt_handle", `"x"`}},
			{"handle 1:2", func(t testing.TB) biAnswer { return biAck(t, n, "c", "1:2", "") }, 400, []string{"receipt_handle"}},
			{"handle 1:2:3:4", func(t testing.TB) biAnswer { return biAck(t, n, "c", "1:2:3:4", "") }, 400, []string{"receipt_handle"}},
			{"handle -1:0:1", func(t testing.TB) biAnswer { return biAck(t, n, "c", "-1:0:1", "") }, 400, []string{"receipt_handle"}},
			{"handle a:b:c", func(t testing.TB) biAnswer { return biAck(t, n, "c", "a:b:c", "") }, 400, []string{"receipt_handle"}},
			{"handle ::", func(t testing.TB) biAnswer { return biAck(t, n, "c", "::", "") }, 400, []string{"receipt_handle"}},
			{"handle with leading zero", func(t testing.TB) biAnswer { return biAck(t, n, "c", "0"+h1, "") }, 400, []string{"receipt_handle"}},
			{"handle with a space", func(t testing.TB) biAnswer { return biAck(t, n, "c", h1+" ", "") }, 400, []string{"receipt_handle"}},
			{"handle with a sign", func(t testing.TB) biAnswer { return biAck(t, n, "c", "+"+h1, "") }, 400, []string{"receipt_handle"}},
			{"handle nonce overflow", func(t testing.TB) biAnswer { return biAck(t, n, "c", "0:0:18446744073709551616", "") }, 400, []string{"receipt_handle"}},
			{"handle too long", func(t testing.TB) biAnswer { return biAck(t, n, "c", "0:0:"+strings.Repeat("1", 100), "") }, 400, []string{"receipt_handle"}},
			{"handle partition 99", func(t testing.TB) biAnswer { return biAck(t, n, "c", "99:0:1", "") }, 400, []string{"99:0:1", "partition 99"}},
			{"handle partition 3", func(t testing.TB) biAnswer { return biAck(t, n, "c", "3:0:"+parts[2], "") }, 400, []string{"partition 3"}},
			{"foreign handle never issued", func(t testing.TB) biAnswer { return biAck(t, n, "c", "0:0:12345", "") }, 410, []string{"0:0:12345"}},
			{"forged nonce", func(t testing.TB) biAnswer { return biAck(t, n, "c", h0forged, "") }, 410, nil},
			{"forged nonce, extend", func(t testing.TB) biAnswer { return biAck(t, n, "c", h0forged, "&extend=true") }, 410, nil},
			{"forged nonce, nack", func(t testing.TB) biAnswer { return biAck(t, n, "c", h0forged, "&extend=0") }, 410, nil},
			{"offset not yet written", func(t testing.TB) biAnswer { return biAck(t, n, "c", h0future, "") }, 410, nil},
			{"extend=maybe", func(t testing.TB) biAnswer { return biAck(t, n, "c", h0, "&extend=maybe") }, 400, []string{"extend", "maybe"}},
			{"extend=false", func(t testing.TB) biAnswer { return biAck(t, n, "c", h0, "&extend=false") }, 400, []string{"extend"}},
			{"extend=13h", func(t testing.TB) biAnswer { return biAck(t, n, "c", h0, "&extend=13h") }, 400, []string{"extend", "12h"}}, // extend=1 is a lease of 1 ms now
			{"extend empty", func(t testing.TB) biAnswer { return biAck(t, n, "c", h0, "&extend=") }, 400, []string{"extend"}},
			{"batch, not JSON", func(t testing.TB) biAnswer {
				return biDo(t, n, "POST", "/v1/topics/c/ack", "application/json", []byte("receipt_handles="+h0))
			}, 400, []string{"invalid JSON"}},
			{"batch, unknown field", func(t testing.TB) biAnswer {
				return biDo(t, n, "POST", "/v1/topics/c/ack", "application/json", biJSON(t, map[string]any{"receipt_handles": []string{h0}, "extend": true}))
			}, 400, []string{"extend"}},
			{"batch, misspelt field", func(t testing.TB) biAnswer {
				return biDo(t, n, "POST", "/v1/topics/c/ack", "application/json", biJSON(t, map[string]any{"receipt_handle": []string{h0}}))
			}, 400, []string{"receipt_handle"}},
			{"batch, trailing garbage", func(t testing.TB) biAnswer {
				return biDo(t, n, "POST", "/v1/topics/c/ack", "application/json", []byte(`{"receipt_handles":["`+h0+`"]} x`))
			}, 400, []string{"trailing"}},
			{"batch, handles not strings", func(t testing.TB) biAnswer {
				return biDo(t, n, "POST", "/v1/topics/c/ack", "application/json", []byte(`{"receipt_handles":[0]}`))
			}, 400, []string{"invalid JSON"}},
			{"batch, empty list", func(t testing.TB) biAnswer {
				return biDo(t, n, "POST", "/v1/topics/c/ack", "application/json", []byte(`{"receipt_handles":[]}`))
			}, 400, []string{"receipt_handles", "empty"}},
			{"batch, empty object", func(t testing.TB) biAnswer {
				return biDo(t, n, "POST", "/v1/topics/c/ack", "application/json", []byte(`{}`))
			}, 400, []string{"receipt_handles"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				biWantError(t, c.send(t), c.status, c.contains...)
				held(t)
			})
		}
	})

	t.Run("batch ack mixed", func(t *testing.T) {
		a := biDo(t, n, "POST", "/v1/topics/c/ack", "application/json",
			biJSON(t, map[string]any{"receipt_handles": []string{h1, "garbage", "0:0:12345"}}))
		biWantStatus(t, a, http.StatusOK)
		var res struct {
			Results []struct {
				ReceiptHandle string `json:"receipt_handle"`
				Status        int    `json:"status"`
				Error         string `json:"error"`
			} `json:"results"`
		}
		if err := json.Unmarshal(a.body, &res); err != nil || len(res.Results) != 3 {
			t.Fatalf("batch ack answer: %v %v", err, a)
		}
		for i, want := range []struct {
			h      string
			status int
		}{{h1, 204}, {"garbage", 400}, {"0:0:12345", 410}} {
			r := res.Results[i]
			if r.ReceiptHandle != want.h || r.Status != want.status {
				t.Errorf("result %d: %+v, want %s → %d", i, r, want.h, want.status)
			}
			if (want.status == 204) != (r.Error == "") {
				t.Errorf("result %d: error %q with status %d", i, r.Error, r.Status)
			}
		}
		// Only h1 settled: partition 1's frontier moved, the others did not,
		// and p0, p2 are still leased.
		if got := biFrontiers(t, n, "c"); !slices.Equal(got, []uint64{0, 1, 0}) {
			t.Fatalf("frontiers after acking only partition 1: %v", got)
		}
		if m := biConsume(t, n, "c", "max=10"); len(m) != 0 {
			t.Fatalf("p0/p2 leases were released: %+v", m)
		}
	})

	t.Run("acked handle acked again", func(t *testing.T) {
		s0 := biDescribeRaw(t, n, "c")
		biWantError(t, biAck(t, n, "c", h1, ""), 410, h1)
		biWantError(t, biAck(t, n, "c", h1, "&extend=true"), 410)
		biWantError(t, biAck(t, n, "c", h1, "&extend=0"), 410)
		unchanged(t, s0)
		if m := biConsume(t, n, "c", "max=10"); len(m) != 0 {
			t.Fatalf("an acked record came back: %+v", m)
		}
	})

	t.Run("real handles still ack", func(t *testing.T) {
		// extend=maybe and the forged/nack attempts above did nothing to h0.
		biWantStatus(t, biAck(t, n, "c", h0, "&extend=true"), http.StatusNoContent)
		biWantStatus(t, biAck(t, n, "c", h0, ""), http.StatusNoContent)
		biWantStatus(t, biAck(t, n, "c", h2, ""), http.StatusNoContent)
		if got := biFrontiers(t, n, "c"); !slices.Equal(got, []uint64{1, 1, 1}) {
			t.Fatalf("frontiers after acking everything: %v", got)
		}
		biWantError(t, biAck(t, n, "c", h0, ""), 410)
		if m := biConsume(t, n, "c", "max=10"); len(m) != 0 {
			t.Fatalf("consume after acking everything: %+v", m)
		}
	})

	t.Run("batch ack over 10000 handles", func(t *testing.T) {
		s0 := biDescribeRaw(t, n, "c")
		hs := make([]string, 10_001)
		for i := range hs {
			hs[i] = fmt.Sprintf("0:%d:1", i)
		}
		biWantError(t, biDo(t, n, "POST", "/v1/topics/c/ack", "application/json", biJSON(t, map[string]any{"receipt_handles": hs})),
			http.StatusRequestEntityTooLarge, "10001")
		unchanged(t, s0)
	})

	// The acked-ahead window bounds what consume hands out, so that every
	// ack fits: with a window of 2, a consume of 3 gets the frontier record
	// and two above it, and the next consume gets nothing until the
	// frontier moves.
	t.Run("acked-ahead window bounds consume", func(t *testing.T) {
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics", "application/json",
			[]byte(`{"name":"aw","partitions":1,"max_acked_ahead_per_partition":2}`)), http.StatusCreated)
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics/aw/produce/batch", "application/json",
			[]byte(`{"records":[{"payload":"a0"},{"payload":"a1"},{"payload":"a2"},{"payload":"a3"}]}`)), http.StatusAccepted)
		biWaitHWMs(t, n, "aw", []uint64{4})
		ms := biConsume(t, n, "aw", "max=10")
		if len(ms) != 3 || ms[0].Offset != 0 || ms[2].Offset != 2 {
			t.Fatalf("consume of aw with a window of 2: %+v, want offsets 0..2", ms)
		}
		if more := biConsume(t, n, "aw", "max=10"); len(more) != 0 {
			t.Fatalf("consume with the window full: %+v, want nothing", more)
		}
		for _, m := range ms[1:] {
			biWantStatus(t, biAck(t, n, "aw", m.ReceiptHandle, ""), http.StatusNoContent) // above the gap at 0: accepted
		}
		biWantStatus(t, biAck(t, n, "aw", ms[0].ReceiptHandle, ""), http.StatusNoContent)
		if more := biConsume(t, n, "aw", "max=10"); len(more) != 1 || more[0].Offset != 3 {
			t.Fatalf("consume after the frontier moved: %+v, want offset 3", more)
		}
	})

	// An ack above a gap when the acked-ahead window is full — possible
	// once the window was lowered under what is out: 503 with
	// Retry-After, and the lease survives it.
	t.Run("acked-ahead window full", func(t *testing.T) {
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics", "application/json",
			[]byte(`{"name":"aa","partitions":1,"max_acked_ahead_per_partition":2}`)), http.StatusCreated)
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics/aa/produce/batch", "application/json",
			[]byte(`{"records":[{"payload":"a0"},{"payload":"a1"},{"payload":"a2"}]}`)), http.StatusAccepted)
		biWaitHWMs(t, n, "aa", []uint64{3})
		ms := biConsume(t, n, "aa", "max=3")
		if len(ms) != 3 || ms[0].Offset != 0 || ms[1].Offset != 1 || ms[2].Offset != 2 {
			t.Fatalf("consume of aa: %+v", ms)
		}
		biWantStatus(t, biAck(t, n, "aa", ms[1].ReceiptHandle, ""), http.StatusNoContent) // above the gap at 0
		biWantStatus(t, biDo(t, n, "PATCH", "/v1/topics/aa", "application/json",
			[]byte(`{"max_acked_ahead_per_partition":1}`)), http.StatusOK)
		biWantError(t, biAck(t, n, "aa", ms[2].ReceiptHandle, ""), http.StatusServiceUnavailable)
		if got := biFrontiers(t, n, "aa"); !slices.Equal(got, []uint64{0}) {
			t.Fatalf("frontier after the refused ack: %v", got)
		}
		biWantStatus(t, biAck(t, n, "aa", ms[0].ReceiptHandle, ""), http.StatusNoContent)
		if got := biFrontiers(t, n, "aa"); !slices.Equal(got, []uint64{2}) {
			t.Fatalf("frontier once the gap closed: %v", got)
		}
		biWantStatus(t, biAck(t, n, "aa", ms[2].ReceiptHandle, ""), http.StatusNoContent) // the lease survived the 503
		if got := biFrontiers(t, n, "aa"); !slices.Equal(got, []uint64{3}) {
			t.Fatalf("frontier after the retried ack: %v", got)
		}
	})

	// A late ack after the lease lapsed and the record went out again: 410
	// for the old handle, 204 for the new one.
	t.Run("late ack after lease expiry", func(t *testing.T) {
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics", "application/json",
			[]byte(`{"name":"vt","partitions":1,"visibility_timeout_ms":1000}`)), http.StatusCreated)
		biWantStatus(t, biDo(t, n, "POST", "/v1/topics/vt/produce", "text/plain", []byte("lapse")), http.StatusAccepted)
		biWaitHWMs(t, n, "vt", []uint64{1})
		first := biConsume(t, n, "vt", "wait=5s")
		if len(first) != 1 || first[0].DeliveryCount != 1 {
			t.Fatalf("first delivery: %+v", first)
		}
		leasedAt := time.Now()
		var second []biMsg
		eventually(t, 10*time.Second, "the lapsed record to be delivered again", func() bool {
			second = biConsume(t, n, "vt", "wait=500ms")
			return len(second) == 1
		})
		if waited := time.Since(leasedAt); waited < 900*time.Millisecond {
			t.Errorf("redelivered %v after the first lease, before the 1 s visibility timeout", waited)
		}
		if second[0].Offset != first[0].Offset || second[0].DeliveryCount != 2 || second[0].ReceiptHandle == first[0].ReceiptHandle {
			t.Fatalf("redelivery %+v of %+v", second[0], first[0])
		}
		biWantError(t, biAck(t, n, "vt", first[0].ReceiptHandle, ""), http.StatusGone, first[0].ReceiptHandle)
		biWantError(t, biAck(t, n, "vt", first[0].ReceiptHandle, "&extend=true"), http.StatusGone)
		if got := biFrontiers(t, n, "vt"); !slices.Equal(got, []uint64{0}) {
			t.Fatalf("a late ack moved the frontier: %v", got)
		}
		biWantStatus(t, biAck(t, n, "vt", second[0].ReceiptHandle, ""), http.StatusNoContent)
		if got := biFrontiers(t, n, "vt"); !slices.Equal(got, []uint64{1}) {
			t.Fatalf("frontier after the live ack: %v", got)
		}
		if m := biConsume(t, n, "vt", ""); len(m) != 0 {
			t.Fatalf("consume after the live ack: %+v", m)
		}
	})
}
