package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// scratchNameRE matches the name of a scratch topic, bench-<8 hex>.
var scratchNameRE = regexp.MustCompile(`^bench-[0-9a-f]{8}$`)

// benchAPI is a fake broker for the bench: topic create and delete, and
// the message routes answered by onMessage (accept when nil).
type benchAPI struct {
	*broker
	mu      sync.Mutex
	created []string // names of POST /v1/topics
	deleted []string // names of DELETE /v1/topics/{t}
}

func newBenchAPI(t *testing.T, onMessage func(r req) (int, string)) *benchAPI {
	t.Helper()
	return newBenchAPIWith(t, func() {}, onMessage)
}

// newBenchAPIWith calls beforeCreate as a create arrives, once it is
// recorded and before it is answered.
func newBenchAPIWith(t *testing.T, beforeCreate func(), onMessage func(r req) (int, string)) *benchAPI {
	t.Helper()
	if onMessage == nil {
		onMessage = accept
	}
	api := &benchAPI{}
	api.broker = newBroker(t, func(r req) (int, string) {
		switch {
		case r.Method == "POST" && r.Path == "/v1/topics":
			var in struct {
				Name       string `json:"name"`
				Partitions int    `json:"partitions"`
			}
			json.Unmarshal([]byte(r.Body), &in)
			api.mu.Lock()
			api.created = append(api.created, in.Name)
			api.mu.Unlock()
			// After the topic is recorded: beforeCreate may interrupt the
			// bench, which can then return (and the test read created)
			// before this handler goes on.
			beforeCreate()
			return 201, fmt.Sprintf(`{"name":%q,"partitions":%d}`, in.Name, max(in.Partitions, 3))
		case r.Method == "DELETE":
			api.mu.Lock()
			api.deleted = append(api.deleted, strings.TrimPrefix(r.Path, "/v1/topics/"))
			api.mu.Unlock()
			return 204, ""
		}
		return onMessage(r)
	})
	return api
}

// scratch returns the one scratch topic created, checking its name and
// that it was deleted, once.
func (api *benchAPI) scratch(t *testing.T) string {
	t.Helper()
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.created) != 1 || !scratchNameRE.MatchString(api.created[0]) {
		t.Fatalf("topics created %q, want one bench-<8 hex>", api.created)
	}
	if len(api.deleted) != 1 || api.deleted[0] != api.created[0] {
		t.Fatalf("created %q, deleted %q: want the scratch topic deleted once", api.created, api.deleted)
	}
	return api.created[0]
}

// messageRequests are the requests to a topic's message routes.
func (api *benchAPI) messageRequests() []req {
	var out []req
	for _, r := range api.requests() {
		if strings.Contains(r.Path, "/produce") || strings.Contains(r.Path, "/consume") || strings.Contains(r.Path, "/ack") {
			out = append(out, r)
		}
	}
	return out
}

// Without TOPIC the bench makes a scratch topic, names it, produces only
// into it, and deletes it when done.
func TestBenchUsesAScratchTopicOfItsOwn(t *testing.T) {
	api := newBenchAPI(t, nil)
	r := against(api.broker).run(t, "bench", "--producers", "3", "--messages", "10", "--size", "16", "--partitions", "4", "--replication-factor", "3")
	mustOK(t, r)
	name := api.scratch(t)
	create := api.only("POST", "/v1/topics")[0]
	if !strings.Contains(create.Body, `"partitions":4`) || !strings.Contains(create.Body, `"retention_ms":3600000`) ||
		!strings.Contains(create.Body, `"replication_factor":3`) {
		t.Errorf("create body %s: want --partitions, --replication-factor and a one-hour retention", create.Body)
	}
	bodies := produceBodies(api.broker, name)
	if len(bodies) != 10 || len(api.messageRequests()) != 10 {
		t.Fatalf("%d produces to %s (%d message requests), want 10", len(bodies), name, len(api.messageRequests()))
	}
	for _, body := range bodies {
		if body != strings.Repeat("x", 16) {
			t.Fatalf("payload %q, want 16 bytes", body)
		}
	}
	if !strings.Contains(r.stderr, "bench: scratch topic "+name+" (4 partitions), deleted when the bench ends") {
		t.Errorf("stderr %q does not name the scratch topic", r.stderr)
	}
	for _, want := range []string{
		"bench: topic " + name + " (scratch, 4 partitions): 3 producers, 10 messages of 16 B, 1 per request\n",
		"produce: 10 messages in ", " msg/s, ", "/s; 10 requests\n",
		"produce: latency p50 ", " p90 ", " p99 ", " p99.9 ", " max ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout %q lacks %q", r.stdout, want)
		}
	}
}

// With TOPIC the bench checks it exists and produces into it, and creates
// or deletes nothing.
func TestBenchIntoANamedTopicOnlyProduces(t *testing.T) {
	api := newBenchAPI(t, func(r req) (int, string) {
		if r.Method == "GET" && r.Path == "/v1/topics/orders" {
			return 200, describeJSON("orders", 0, 0, 0, 0, 0, 0)
		}
		return 202, ""
	})
	r := against(api.broker).run(t, "bench", "orders", "--producers", "2", "--messages", "5")
	mustOK(t, r)
	if len(api.created) != 0 || len(api.deleted) != 0 {
		t.Fatalf("created %q deleted %q on a named topic", api.created, api.deleted)
	}
	if n := len(produceBodies(api.broker, "orders")); n != 5 {
		t.Fatalf("%d produces, want 5", n)
	}
	if !strings.Contains(r.stdout, "bench: topic orders (existing, 6 partitions)") {
		t.Errorf("stdout %q", r.stdout)
	}

	missing := newBenchAPI(t, func(r req) (int, string) { return 404, `{"error":"topic not found"}` })
	r = against(missing.broker).run(t, "bench", "ghost")
	if r.code == 0 || !strings.Contains(r.stderr, "topic ghost not found (leave out TOPIC and the bench makes a scratch topic of its own)") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if n := len(missing.messageRequests()); n != 0 {
		t.Errorf("%d message requests to a missing topic", n)
	}
}

// describeJSON is a topic's describe answer whose partition i holds
// held[i] records (retention took the first 3 of a partition that holds
// any); a negative count is a partition whose owner gave no stats.
func describeJSON(name string, held ...int) string {
	var stats []string
	for i, n := range held {
		if n < 0 {
			stats = append(stats, fmt.Sprintf(`{"index":%d,"available":false}`, i))
			continue
		}
		oldest := 0
		if n > 0 {
			oldest = 3
		}
		stats = append(stats, fmt.Sprintf(`{"index":%d,"oldest_offset":%d,"next_offset":%d}`, i, oldest, oldest+n))
	}
	return fmt.Sprintf(`{"name":%q,"partitions":%d,"partition_stats":[%s]}`, name, len(held), strings.Join(stats, ","))
}

// A named topic that holds records is refused before anything is sent
// (the bench's records would reach its consumers), and so is one whose
// stats do not all say; --allow-nonempty writes there anyway.
func TestBenchRefusesANonemptyTopic(t *testing.T) {
	for _, tt := range []struct {
		describe string
		says     string
	}{
		{describeJSON("orders", 0, 2, 0), "topic orders holds 2 records: the bench would add its own among them"},
		{describeJSON("orders", 0, -1, 0), "topic orders: whether it holds records is unknown, 1 partition of 3 gave no stats"},
		{`{"name":"orders","partitions":2}`, "topic orders: whether it holds records is unknown, 2 partitions of 2 gave no stats"},
	} {
		api := newBenchAPI(t, func(r req) (int, string) {
			if r.Method == "GET" {
				return 200, tt.describe
			}
			return 202, ""
		})
		r := against(api.broker).run(t, "bench", "orders", "--producers", "1", "--messages", "5")
		if r.code != 1 || !strings.Contains(r.stderr, tt.says) || !strings.Contains(r.stderr, "or pass --allow-nonempty") {
			t.Errorf("%s: exit %d stderr %q, want it to say %q", tt.describe, r.code, r.stderr, tt.says)
		}
		if n := len(api.messageRequests()); n != 0 {
			t.Errorf("%s: %d message requests to a topic the bench refused", tt.describe, n)
		}

		r = against(api.broker).run(t, "bench", "orders", "--producers", "1", "--messages", "5", "--allow-nonempty")
		mustOK(t, r)
		if n := len(produceBodies(api.broker, "orders")); n != 5 {
			t.Errorf("%s: --allow-nonempty: %d produces, want 5", tt.describe, n)
		}
	}
}

func TestBenchBatchProduceSplitsExactly(t *testing.T) {
	api := newBenchAPI(t, func(r req) (int, string) {
		var in struct {
			Records []json.RawMessage `json:"records"`
		}
		json.Unmarshal([]byte(r.Body), &in)
		return 202, fmt.Sprintf(`{"accepted":%d}`, len(in.Records))
	})
	r := against(api.broker).run(t, "bench", "--producers", "2", "--messages", "10", "--batch", "4", "--size", "3")
	mustOK(t, r)
	reqs := api.only("POST", "/v1/topics/"+api.scratch(t)+"/produce/batch")
	total := 0
	var sizes []int
	for _, q := range reqs {
		var in struct {
			Records []struct {
				Payload json.RawMessage `json:"payload"`
			} `json:"records"`
		}
		if err := json.Unmarshal([]byte(q.Body), &in); err != nil {
			t.Fatal(err)
		}
		for _, rec := range in.Records {
			if string(rec.Payload) != `"xxx"` {
				t.Fatalf("record payload %s", rec.Payload)
			}
		}
		sizes = append(sizes, len(in.Records))
		total += len(in.Records)
	}
	if total != 10 || len(reqs) != 3 || len(api.messageRequests()) != 3 {
		t.Fatalf("batches %v (total %d, %d requests), want 4+4+2", sizes, total, len(api.messageRequests()))
	}
	if !strings.Contains(r.stdout, "produce: 10 messages") || !strings.Contains(r.stdout, "; 3 requests") {
		t.Errorf("stdout %q", r.stdout)
	}
	if got := batchBodySize(2, 3); got != len(`{"records":[{"payload":"xxx"},{"payload":"xxx"}]}`)+1 {
		t.Errorf("batchBodySize(2, 3) = %d: not the body's size (one trailing comma over)", got)
	}
}

// consumeAPI produces into a counter and hands the records out from it;
// the batch ack answers 503 once for h1 (acked-ahead window full).
func consumeAPI(t *testing.T) (api *benchAPI, settled map[string]int, refused *bool) {
	var mu sync.Mutex
	produced, next := 0, 0
	settled = map[string]int{}
	refused = new(bool)
	api = newBenchAPI(t, func(r req) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/produce"):
			produced++
			return 202, ""
		case r.Method == "GET":
			var msgs []string
			for len(msgs) < maxOf(r) && next < produced && len(msgs) < 4 {
				msgs = append(msgs, fmt.Sprintf(`{"partition":0,"offset":%d,"payload":"x","receipt_handle":"h%d"}`, next, next))
				next++
			}
			if len(msgs) == 0 {
				return 204, ""
			}
			return 200, `{"messages":[` + strings.Join(msgs, ",") + `]}`
		case r.Query.Has("receipt_handle"):
			settled[r.Query.Get("receipt_handle")]++
			return 204, ""
		default:
			var in struct {
				ReceiptHandles []string `json:"receipt_handles"`
			}
			json.Unmarshal([]byte(r.Body), &in)
			var res []string
			for _, h := range in.ReceiptHandles {
				status := 204
				if h == "h1" && !*refused {
					*refused, status = true, 503
				} else {
					settled[h]++
				}
				res = append(res, fmt.Sprintf(`{"receipt_handle":%q,"status":%d}`, h, status))
			}
			return 200, `{"results":[` + strings.Join(res, ",") + `]}`
		}
	})
	return api, settled, refused
}

// The consume phase acks every message; a 503 for one handle is retried
// for that handle alone and counted, not failed. --consume is as many
// consumers as producers; --consumers sets them.
func TestBenchConsume(t *testing.T) {
	for _, tt := range []struct {
		flags     []string
		consumers string
	}{
		{[]string{"--consume"}, ", 2 consumers\n"},
		{[]string{"--consumers", "3"}, ", 3 consumers\n"},
	} {
		api, settled, refused := consumeAPI(t)
		r := against(api.broker).run(t, append([]string{"bench", "--producers", "2", "--messages", "9"}, tt.flags...)...)
		mustOK(t, r)
		api.scratch(t)
		if !strings.Contains(r.stdout, tt.consumers) || !strings.Contains(r.stdout, "produce: 9 messages") ||
			!strings.Contains(r.stdout, "consume: 9 messages") || !strings.Contains(r.stdout, "consume: latency p50 ") ||
			!strings.Contains(r.stdout, "consume: 1 acks retried after a transient answer") {
			t.Errorf("%v: stdout %q", tt.flags, r.stdout)
		}
		if !*refused || len(settled) != 9 {
			t.Errorf("%v: settled %v (refused once: %v), want each of 9 handles", tt.flags, settled, *refused)
		}
		for h, n := range settled {
			if n != 1 {
				t.Errorf("%v: %s settled %d times", tt.flags, h, n)
			}
		}
	}
}

// --consume-max 1 measures consume + ack one record per call: every
// consume asks for one record and every record is acknowledged alone; a
// larger value asks for that many and acknowledges them in one batch.
func TestBenchConsumeMax(t *testing.T) {
	for _, tt := range []struct {
		max        string
		single     bool
		wantMaxArg int
	}{{"1", true, 1}, {"7", false, 7}} {
		api, settled, _ := consumeAPI(t)
		r := against(api.broker).run(t, "bench", "--producers", "1", "--messages", "9", "--consumers", "1", "--consume-max", tt.max)
		mustOK(t, r)
		api.scratch(t)
		var gets, singles, batches int
		for _, q := range api.requests() {
			switch {
			case q.Method == "GET":
				gets++
				if n := maxOf(q); n > tt.wantMaxArg {
					t.Errorf("--consume-max %s: a consume asked for max=%d", tt.max, n)
				}
			case q.Query.Has("receipt_handle"):
				singles++
			case strings.HasSuffix(q.Path, "/ack"):
				batches++
			}
		}
		if len(settled) != 9 {
			t.Errorf("--consume-max %s: settled %v, want 9 handles", tt.max, settled)
		}
		if tt.single && (batches != 0 || singles < 9) || !tt.single && batches == 0 {
			t.Errorf("--consume-max %s: %d consumes, %d single acks, %d batch acks", tt.max, gets, singles, batches)
		}
	}
}

// --json prints one JSON document with every figure, and nothing else.
func TestBenchJSON(t *testing.T) {
	api, _, _ := consumeAPI(t)
	r := against(api.broker).run(t, "bench", "--producers", "2", "--messages", "9", "--size", "100", "--consumers", "2", "--json")
	mustOK(t, r)
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	var rep benchReport
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document: %s", r.stdout)
	}
	want := benchSetting{Producers: 2, Consumers: 2, Messages: 9, Size: 100, Batch: 1, ConsumeMax: 100}
	if rep.Topic != api.scratch(t) || !rep.Scratch || !rep.ScratchDeleted || rep.Partitions != 3 || rep.Settings != want || rep.Interrupted {
		t.Errorf("report %+v", rep)
	}
	for name, p := range map[string]*phaseReport{"produce": rep.Produce, "consume": rep.Consume} {
		if p == nil || p.Messages != 9 || p.Errors != 0 || p.Stopped != "" || p.ElapsedSeconds <= 0 ||
			p.MessagesPerSecond <= 0 || p.BytesPerSecond != p.MessagesPerSecond*100 {
			t.Fatalf("%s: %+v", name, p)
		}
		l := p.LatencyUs
		if l.Min < 1 || l.P50 < l.Min || l.P90 < l.P50 || l.P99 < l.P90 || l.P999 < l.P99 || l.Max < l.P999 || l.Mean < float64(l.Min) {
			t.Errorf("%s latency not ordered min ≤ p50 ≤ p90 ≤ p99 ≤ p99.9 ≤ max: %+v", name, l)
		}
	}
	if rep.Produce.Requests != 9 || rep.Consume.AcksRetried != 1 {
		t.Errorf("produce %+v consume %+v", rep.Produce, rep.Consume)
	}
}

// --duration produces until the time is up instead of a count; every
// message counted was answered.
func TestBenchDuration(t *testing.T) {
	api := newBenchAPI(t, nil)
	r := against(api.broker).run(t, "bench", "--producers", "2", "--duration", "50ms", "-o", "json")
	mustOK(t, r)
	var rep benchReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	sent := len(produceBodies(api.broker, api.scratch(t)))
	if rep.Settings.DurationMs != 50 || rep.Settings.Messages != 0 || rep.Produce.Messages == 0 || int(rep.Produce.Messages) != sent {
		t.Fatalf("settings %+v produce %+v, %d produce requests", rep.Settings, rep.Produce, sent)
	}
	r = against(api.broker).run(t, "bench", "--duration", "50ms")
	if !strings.Contains(r.stdout, "producers, messages of 256 B for 50ms, 1 per request") {
		t.Errorf("stdout %q", r.stdout)
	}
}

// On a terminal a progress bar runs on stderr (and is cleared); piped,
// the bench prints nothing but its report and the scratch topic's name.
func TestBenchProgressOnlyOnATerminal(t *testing.T) {
	api := newBenchAPI(t, nil)
	c := against(api.broker)
	c.tty = true
	r := c.run(t, "bench", "--producers", "1", "--messages", "3")
	mustOK(t, r)
	if !strings.Contains(r.stderr, "produce   0% |") || !strings.Contains(r.stderr, "(0/3, 0 msg/") || strings.Contains(r.stdout, "%") {
		t.Errorf("terminal: stdout %q stderr %q", r.stdout, r.stderr)
	}
	c.tty = false
	r = c.run(t, "bench", "--producers", "1", "--messages", "3", "--duration", "1ms")
	if r.code == 0 {
		t.Fatal("--messages with --duration accepted")
	}
	r = c.run(t, "bench", "--producers", "1", "--messages", "3")
	mustOK(t, r)
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "bench: scratch topic bench-") {
		t.Errorf("piped: stderr %q, want the scratch topic's line alone", r.stderr)
	}
}
