package client_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// fakeBroker is a one-partition-per-topic stand-in for a Narad node that
// speaks the routes the examples and the consumer-loop tests use, with the
// answers of docs/http-api.md: topics (create, describe), produce (single
// and batch), consume with long-poll and leases, ack/extend/nack. Leases
// never lapse by themselves (no clock): a test decides when one is lost
// (loseLeases), so nothing here depends on timing.
type fakeBroker struct {
	srv *httptest.Server

	mu      sync.Mutex
	topics  map[string]*fakeTopic
	events  []string      // "ack H", "nack H", "extend H", in arrival order
	changed chan struct{} // closed and replaced on every change
	// failConsumes is how many consumes to answer 503 before serving.
	failConsumes int
	// loseLeases makes every extend answer 410 (the lease lapsed).
	loseLeases bool
}

type fakeTopic struct {
	name          string
	partitions    int
	visibilityMs  int64
	log           []fakeRecord
	ready         []uint64          // offsets available to consume, in order
	leased        map[string]uint64 // receipt handle -> offset
	deliveries    map[uint64]int
	handleCounter int
}

type fakeRecord struct {
	key     string
	payload []byte
	at      int64
}

func newFakeBroker() *fakeBroker {
	b := &fakeBroker{topics: map[string]*fakeTopic{}, changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/topics", b.createTopic)
	mux.HandleFunc("GET /v1/topics/{topic}", b.describeTopic)
	mux.HandleFunc("POST /v1/topics/{topic}/produce", b.produce)
	mux.HandleFunc("POST /v1/topics/{topic}/produce/batch", b.produceBatch)
	mux.HandleFunc("GET /v1/topics/{topic}/consume", b.consume)
	mux.HandleFunc("POST /v1/topics/{topic}/ack", b.ack)
	b.srv = httptest.NewServer(mux)
	return b
}

func (b *fakeBroker) URL() string { return b.srv.URL }
func (b *fakeBroker) Close()      { b.srv.Close() }

// change wakes every waiter; b.mu is held.
func (b *fakeBroker) change() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// waitFor blocks until cond (called with b.mu held) is true, or fails
// after a generous deadline: the tests wait on conditions, not on time.
func (b *fakeBroker) waitFor(what string, cond func() bool) error {
	deadline := time.After(20 * time.Second)
	for {
		b.mu.Lock()
		ok, ch := cond(), b.changed
		b.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-deadline:
			return fmt.Errorf("gave up waiting for %s; events %v", what, b.eventLog())
		}
	}
}

// eventLog is the acks, nacks and extends received, in order.
func (b *fakeBroker) eventLog() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events {
		if e != "consume" {
			out = append(out, e)
		}
	}
	return out
}

// polledAfter reports whether a consume arrived after event e: a loop
// that consumes again has finished with what it held (b.mu is held).
func (b *fakeBroker) polledAfter(e string) bool {
	i := slices.Index(b.events, e)
	return i >= 0 && slices.Contains(b.events[i:], "consume")
}

// count is how many events equal e; b.mu is held.
func (b *fakeBroker) count(e string) int {
	n := 0
	for _, got := range b.events {
		if got == e {
			n++
		}
	}
	return n
}

func fail(w http.ResponseWriter, status int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf(format, args...)})
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// verbatim is a JSON payload that is written as it was sent: encoding/json
// would compact a json.RawMessage, and a node returns the bytes it stored.
type verbatim []byte

// withPayload is m's JSON with "payload" set to p's bytes as they are.
func withPayload(m map[string]any, p verbatim) json.RawMessage {
	b, _ := json.Marshal(m)
	return json.RawMessage(append(append(append(b[:len(b)-1:len(b)-1], `,"payload":`...), p...), '}'))
}

// writeMessages writes a consume answer: one message, or {"messages": [...]}.
func writeMessages(w http.ResponseWriter, msgs []json.RawMessage, list bool) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if !list {
		w.Write(msgs[0])
		return
	}
	io.WriteString(w, `{"messages":[`)
	for i, m := range msgs {
		if i > 0 {
			io.WriteString(w, ",")
		}
		w.Write(m)
	}
	io.WriteString(w, "]}")
}

func (b *fakeBroker) topic(w http.ResponseWriter, r *http.Request) *fakeTopic {
	t := b.topics[r.PathValue("topic")]
	if t == nil {
		fail(w, http.StatusNotFound, "topic %q does not exist", r.PathValue("topic"))
	}
	return t
}

func (t *fakeTopic) view() map[string]any {
	return map[string]any{"name": t.name, "partitions": t.partitions, "retention_ms": 604800000,
		"visibility_timeout_ms": t.visibilityMs, "max_in_flight_per_partition": 1024,
		"max_acked_ahead_per_partition": 1024, "created_at": 1796004226, "role": "standalone"}
}

func (b *fakeBroker) createTopic(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name                string `json:"name"`
		Partitions          int    `json:"partitions"`
		VisibilityTimeoutMs int64  `json:"visibility_timeout_ms"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" {
		fail(w, http.StatusBadRequest, "invalid JSON body")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.topics[req.Name] != nil {
		fail(w, http.StatusConflict, "topic %q already exists", req.Name)
		return
	}
	t := &fakeTopic{name: req.Name, partitions: max(req.Partitions, 1), visibilityMs: req.VisibilityTimeoutMs,
		leased: map[string]uint64{}, deliveries: map[uint64]int{}}
	if t.visibilityMs == 0 {
		t.visibilityMs = 30000
	}
	b.topics[req.Name] = t
	answer(w, http.StatusCreated, t.view())
}

func (b *fakeBroker) describeTopic(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.topic(w, r); t != nil {
		answer(w, http.StatusOK, t.view())
	}
}

// append stores one record and makes it available; b.mu is held.
func (b *fakeBroker) append(t *fakeTopic, key string, payload []byte) {
	t.log = append(t.log, fakeRecord{key: key, payload: payload, at: 1796004226})
	t.ready = append(t.ready, uint64(len(t.log)-1))
}

func (b *fakeBroker) produce(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topic(w, r)
	if t == nil {
		return
	}
	if len(body) == 0 {
		fail(w, http.StatusBadRequest, "the body is empty")
		return
	}
	b.append(t, r.URL.Query().Get("key"), body)
	b.change()
	w.WriteHeader(http.StatusAccepted)
}

func (b *fakeBroker) produceBatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Records []struct {
			Key           string          `json:"key"`
			Payload       json.RawMessage `json:"payload"`
			PayloadBase64 string          `json:"payload_base64"`
		} `json:"records"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, "invalid JSON body")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topic(w, r)
	if t == nil {
		return
	}
	for _, rec := range req.Records {
		p := []byte(rec.Payload)
		var s string
		switch {
		case rec.PayloadBase64 != "":
			p, _ = base64.StdEncoding.DecodeString(rec.PayloadBase64)
		case json.Unmarshal(rec.Payload, &s) == nil:
			p = []byte(s) // a JSON string is stored as its text
		}
		b.append(t, rec.Key, p)
	}
	b.change()
	answer(w, http.StatusAccepted, map[string]int{"accepted": len(req.Records)})
}

// message is a record as consume answers it (the payload rules of
// docs/http-api.md and docs/concepts.md).
func (t *fakeTopic) message(off uint64, handle string) json.RawMessage {
	rec := t.log[off]
	m := map[string]any{"topic": t.name, "partition": 0, "offset": off, "timestamp": rec.at,
		"delivery_count": t.deliveries[off]}
	if rec.key != "" {
		m["key"] = rec.key
	}
	if handle != "" {
		m["receipt_handle"] = handle
	}
	var p []byte
	switch {
	case json.Valid(rec.payload):
		p = rec.payload
	case utf8.Valid(rec.payload):
		p, _ = json.Marshal(string(rec.payload))
		m["payload_encoding"] = "text"
	default:
		p, _ = json.Marshal(base64.StdEncoding.EncodeToString(rec.payload))
		m["payload_encoding"] = "base64"
	}
	return withPayload(m, p)
}

func (b *fakeBroker) consume(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	wait := time.Duration(0)
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fail(w, http.StatusBadRequest, "query parameter wait=%q: want a duration", v)
			return
		}
		wait = d
	}
	n := 1
	if q.Has("max") {
		n, _ = strconv.Atoi(q.Get("max"))
	}
	timeout := time.After(wait)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, "consume")
	b.change()
	if b.failConsumes > 0 {
		b.failConsumes--
		fail(w, http.StatusServiceUnavailable, "the partition's owner does not answer; retry")
		return
	}
	for {
		t := b.topic(w, r)
		if t == nil {
			return
		}
		if q.Has("offset") { // a replay: records from offset, no lease
			from, _ := strconv.ParseUint(q.Get("offset"), 10, 64)
			var out []json.RawMessage
			for off := from; off < uint64(len(t.log)) && len(out) < n; off++ {
				out = append(out, t.message(off, ""))
			}
			if len(out) == 0 {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			writeMessages(w, out, q.Has("max"))
			return
		}
		if len(t.ready) > 0 {
			var out []json.RawMessage
			for len(t.ready) > 0 && len(out) < n {
				off := t.ready[0]
				t.ready = t.ready[1:]
				t.handleCounter++
				handle := fmt.Sprintf("0:%d:%d", off, t.handleCounter)
				t.leased[handle] = off
				t.deliveries[off]++
				out = append(out, t.message(off, handle))
			}
			b.change()
			writeMessages(w, out, q.Has("max"))
			return
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
			b.mu.Lock()
		case <-timeout:
			b.mu.Lock()
			w.WriteHeader(http.StatusNoContent)
			return
		case <-r.Context().Done():
			b.mu.Lock()
			return
		}
	}
}

func (b *fakeBroker) ack(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	handle := q.Get("receipt_handle")
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topic(w, r)
	if t == nil {
		return
	}
	off, ok := t.leased[handle]
	op := map[string]string{"": "ack", "true": "extend", "0": "nack"}[q.Get("extend")]
	b.events = append(b.events, op+" "+handle)
	defer b.change()
	if !ok || (op == "extend" && b.loseLeases) {
		fail(w, http.StatusGone, "the lease of %s lapsed or was superseded", handle)
		return
	}
	switch op {
	case "ack":
		delete(t.leased, handle)
	case "nack":
		delete(t.leased, handle)
		t.ready = append([]uint64{off}, t.ready...)
	}
	w.WriteHeader(http.StatusNoContent)
}
