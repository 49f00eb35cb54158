package client

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// headerServer answers every request 202 {"accepted":1} and keeps its
// headers and body.
func headerServer(t *testing.T) (*Client, *[]http.Header, *[][]byte) {
	t.Helper()
	var hs []http.Header
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hs, bodies = append(hs, r.Header.Clone()), append(bodies, b)
		w.WriteHeader(202)
		io.WriteString(w, `{"accepted":1}`)
	}))
	t.Cleanup(srv.Close)
	return New(srv.URL, "", "", nil), &hs, &bodies
}

// ProduceOptions.Delay goes as Narad-Delay in the node's duration
// syntax, rounded up to the millisecond; a zero Delay is sent (it beats
// the topic's delivery_delay); DeliverAt goes as Narad-Deliver-At in
// Unix milliseconds, rounded up; neither set sends neither header.
func TestProduceSchedulesTheRecord(t *testing.T) {
	c, hs, _ := headerServer(t)
	at := time.Date(2026, 12, 24, 18, 0, 0, 500, time.UTC) // 500ns past a millisecond
	for _, tc := range []struct {
		opts           ProduceOptions
		delay, deliver string // "" : the header is absent
	}{
		{ProduceOptions{Delay: new(90 * time.Second)}, "1m30s", ""},
		{ProduceOptions{Delay: new(1500*time.Millisecond + 1)}, "1501ms", ""},
		{ProduceOptions{Delay: new(time.Duration(0))}, "0s", ""},
		{ProduceOptions{DeliverAt: at}, "", "1798135200001"},
		{ProduceOptions{DeliverAt: time.Unix(-5, 0)}, "", "1"},
		{ProduceOptions{Delay: new(time.Minute), DeliverAt: at}, "1m0s", "1798135200001"}, // the node's to refuse
		{ProduceOptions{MsgID: "m1"}, "", ""},
	} {
		if err := c.Produce(ctx, "orders", []byte("x"), tc.opts); err != nil {
			t.Fatal(err)
		}
		h := (*hs)[len(*hs)-1]
		for name, want := range map[string]string{"Narad-Delay": tc.delay, "Narad-Deliver-At": tc.deliver} {
			got, sent := h[name]
			if (want == "") == sent || (sent && (len(got) != 1 || got[0] != want)) {
				t.Errorf("%+v: %s %q (sent %v), want %q", tc.opts, name, got, sent, want)
			}
		}
	}
	if (*hs)[len(*hs)-1].Get("Narad-Msg-Id") != "m1" {
		t.Error("the schedule headers pushed the msg id out")
	}
}

// A batch record's schedule goes as "delay" (a duration string) or
// "deliver_at" (Unix milliseconds) in JSON and NDJSON bodies; WithDelay
// and WithDeliverAt set one and clear the other; the binary body, which
// has no field for them, is refused before anything is sent.
func TestProduceBatchSchedulesRecords(t *testing.T) {
	c, _, bodies := headerServer(t)
	at := time.UnixMilli(1798135200000)
	recs := []BatchRecord{
		RecordFromBytes([]byte("a")).WithDeliverAt(at).WithDelay(15 * time.Minute),
		RecordFromBytes([]byte("b")).WithDelay(time.Hour).WithDeliverAt(at),
		RecordFromBytes([]byte("c")).WithDelay(0),
		RecordFromBytes([]byte("d")),
	}
	for _, f := range []BatchFormat{BatchJSON, BatchNDJSON} {
		if _, err := c.ProduceBatchAs(ctx, "orders", recs, f); err != nil {
			t.Fatal(err)
		}
		got := string((*bodies)[len(*bodies)-1])
		for _, want := range []string{`{"delay":"15m0s","payload":"a"}`, `{"deliver_at":1798135200000,"payload":"b"}`,
			`{"delay":"0s","payload":"c"}`, `{"payload":"d"}`} {
			if !strings.Contains(got, want) {
				t.Errorf("%v body %s lacks %s", f, got, want)
			}
		}
	}
	sent := len(*bodies)
	for _, r := range recs[:3] {
		_, err := c.ProduceBatchAs(ctx, "orders", []BatchRecord{recs[3], r}, BatchBinary)
		if err == nil || !strings.Contains(err.Error(), "record 1") || !strings.Contains(err.Error(), "JSON or NDJSON") {
			t.Errorf("binary body with %+v: %v", r, err)
		}
	}
	if len(*bodies) != sent {
		t.Error("a refused binary batch was sent")
	}
}

// A topic's delivery_delay_ms is sent on create when set and on alter
// whenever given (0 turns it off), and read back from the topic.
func TestTopicDeliveryDelay(t *testing.T) {
	c, f := newFake(t, reply{status: 201, body: `{"name":"orders","partitions":1,"delivery_delay_ms":30000}`},
		reply{status: 200, body: `{"name":"orders","partitions":1}`})
	got, err := c.CreateTopic(ctx, CreateTopicRequest{Name: "orders", DeliveryDelayMs: 30000})
	if err != nil || got.DeliveryDelayMs != 30000 {
		t.Fatalf("create: %+v %v", got, err)
	}
	got, err = c.AlterTopic(ctx, "orders", AlterTopicRequest{DeliveryDelayMs: new(int64(0))})
	if err != nil || got.DeliveryDelayMs != 0 {
		t.Fatalf("alter: %+v %v", got, err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics", ContentType: "application/json", Body: `{"name":"orders","delivery_delay_ms":30000}`},
		seen{Method: "PATCH", Path: "/v1/topics/orders", ContentType: "application/json", Body: `{"delivery_delay_ms":0}`},
	)
}

// A scheduled message's deliver_at decodes on both the one-pass path and
// encoding/json's, and DueTime reads it; a message without one has none.
func TestMessageDeliverAt(t *testing.T) {
	body := `{"messages":[{"topic":"t","partition":0,"offset":1,"payload":1,"timestamp":1,"deliver_at":1798135200000,"headers":{"narad-deliver-at":"1798135200000"}},{"topic":"t","partition":0,"offset":2,"payload":2,"timestamp":1}]}`
	for _, msgs := range decodedBothWays(t, body, 2) {
		if msgs[0].DeliverAt != 1798135200000 || !msgs[0].DueTime().Equal(time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)) {
			t.Errorf("deliver_at %d, due %v", msgs[0].DeliverAt, msgs[0].DueTime())
		}
		if msgs[1].DeliverAt != 0 || !msgs[1].DueTime().IsZero() {
			t.Errorf("an unscheduled message: deliver_at %d, due %v", msgs[1].DeliverAt, msgs[1].DueTime())
		}
	}
}

// Describe's per-partition scheduled count is read when present.
func TestPartitionStatsScheduled(t *testing.T) {
	c, _ := newFake(t, reply{status: 200, body: `{"name":"t","partitions":2,"delivery_delay_ms":5000,"partition_stats":[{"index":0,"scheduled":12},{"index":1}]}`})
	d, err := c.GetTopic(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if d.DeliveryDelayMs != 5000 || len(d.PartitionStats) != 2 || d.PartitionStats[0].Scheduled != 12 || d.PartitionStats[1].Scheduled != 0 {
		t.Errorf("decoded %+v", d)
	}
	if !bytes.Contains(d.Raw(), []byte(`"scheduled":12`)) {
		t.Errorf("raw %s", d.Raw())
	}
}

// delayText never rounds down: a record is not due before its delay.
func TestDelayTextRoundsUp(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", time.Nanosecond: "1ms", time.Millisecond: "1ms", 999*time.Millisecond + 1: "1s",
		7 * 24 * time.Hour: "168h0m0s", -time.Second: "-1s",
	} {
		if got := delayText(d); got != want {
			t.Errorf("delayText(%v) = %q, want %q", d, got, want)
		}
	}
}
