package e2e

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestScheduledDeliveryThroughTheClient: scheduled delivery
// (docs/concepts.md, "Scheduled delivery") as the Go client and the
// OpenAPI document present it, on a real node. ProduceOptions.Delay and
// DeliverAt, and a batch's WithDelay and WithDeliverAt, reach the node:
// queue consume holds those records back while the others are delivered
// and acked, replay shows them at once with Message.DeliverAt, describe
// counts them in PartitionStats.Scheduled, and a record is consumed no
// earlier than its due time. A topic's DeliveryDelayMs schedules a record
// that names no delay, and an explicit Delay of 0 beats it. Every answer
// carrying one of the new fields validates against the schema the node
// serves, which names the field.
func TestScheduledDeliveryThroughTheClient(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	doc := servedSchemas(t, n)

	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "sched", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	const soon = 1500 * time.Millisecond
	later := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	before := time.Now()
	for _, o := range []client.ProduceOptions{{Delay: new(soon)}, {DeliverAt: later}, {}} {
		if err := n.c.Produce(ctx, "sched", []byte("single"), o); err != nil {
			t.Fatal(err)
		}
	}
	batch := []client.BatchRecord{
		client.RecordFromBytes([]byte("batch")).WithDelay(soon),
		client.RecordFromBytes([]byte("batch")).WithDeliverAt(later),
		client.RecordFromBytes([]byte("batch")),
	}
	if _, err := n.c.ProduceBatch(ctx, "sched", batch); err != nil {
		t.Fatal(err)
	}
	after := time.Now()

	// Offsets 0..5: due soon, due later, due now, and again. Consume
	// gets the two due now, whatever lies in front of them.
	got, err := n.c.Consume(ctx, "sched", client.ConsumeOptions{Max: 10, Wait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(offsetsOf(got), []uint64{2, 5}) {
		t.Fatalf("first consume: %v, want offsets 2 and 5 only", offsetsOf(got))
	}
	for _, m := range got {
		if m.DeliverAt != 0 {
			t.Errorf("offset %d, due at once, has deliver_at %d", m.Offset, m.DeliverAt)
		}
		if err := n.c.Ack(ctx, "sched", m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}

	// Replay shows every record at once, the scheduled ones with their
	// due times.
	replay, err := n.c.Consume(ctx, "sched", client.ConsumeOptions{Partition: new(0), Offset: new(uint64(0)), Max: 10})
	if err != nil || len(replay) != 6 {
		t.Fatalf("replay: %v %v", offsetsOf(replay), err)
	}
	for _, i := range []int{0, 3} {
		due := replay[i].DueTime()
		if due.Before(before.Add(soon).Truncate(time.Millisecond)) || due.After(after.Add(soon+time.Millisecond)) {
			t.Errorf("offset %d: due %v, want %v after its produce (%v .. %v)", i, due, soon, before, after)
		}
	}
	for _, i := range []int{1, 4} {
		if !replay[i].DueTime().Equal(later) {
			t.Errorf("offset %d: due %v, want %v", i, replay[i].DueTime(), later)
		}
	}
	for _, m := range replay {
		doc.check(t, "Message", m.Raw(), "deliver_at", m.DeliverAt != 0)
	}

	// Describe counts the four waiting (the consume above loaded the
	// partition's queue on this node).
	d, err := n.c.GetTopic(ctx, "sched")
	if err != nil || len(d.PartitionStats) != 1 || d.PartitionStats[0].Scheduled != 4 {
		t.Fatalf("describe: %+v %v", d.PartitionStats, err)
	}
	var stats struct {
		PartitionStats []json.RawMessage `json:"partition_stats"`
	}
	if err := json.Unmarshal(d.Raw(), &stats); err != nil {
		t.Fatal(err)
	}
	doc.check(t, "PartitionStats", stats.PartitionStats[0], "scheduled", true)

	// The two due soon come, never before their due time; the two due in
	// an hour stay.
	var due []client.Message
	deadline := time.Now().Add(20 * time.Second)
	for len(due) < 2 && time.Now().Before(deadline) {
		ms, err := n.c.Consume(ctx, "sched", client.ConsumeOptions{Max: 10, Wait: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if now := time.Now(); now.Before(m.DueTime()) {
				t.Errorf("offset %d delivered at %v, before its due time %v", m.Offset, now, m.DueTime())
			}
			doc.check(t, "Message", m.Raw(), "deliver_at", true)
			if err := n.c.Ack(ctx, "sched", m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
		due = append(due, ms...)
	}
	if !slices.Equal(offsetsOf(due), []uint64{0, 3}) {
		t.Fatalf("due records consumed: %v, want offsets 0 and 3", offsetsOf(due))
	}
	if ms, err := n.c.Consume(ctx, "sched", client.ConsumeOptions{Max: 10, Wait: 300 * time.Millisecond}); err != nil || len(ms) != 0 {
		t.Fatalf("records due in an hour were offered: %v %v", offsetsOf(ms), err)
	}

	// A topic's delivery delay: a record without a delay waits for it;
	// Delay 0 is due at once.
	top, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "sched-topic", Partitions: 1, DeliveryDelayMs: 3_600_000})
	if err != nil || top.DeliveryDelayMs != 3_600_000 {
		t.Fatalf("create with a delivery delay: %+v %v", top, err)
	}
	doc.check(t, "Topic", top.Raw(), "delivery_delay_ms", true)
	for _, o := range []client.ProduceOptions{{}, {Delay: new(time.Duration(0))}} {
		if err := n.c.Produce(ctx, "sched-topic", []byte("x"), o); err != nil {
			t.Fatal(err)
		}
	}
	got, err = n.c.Consume(ctx, "sched-topic", client.ConsumeOptions{Max: 10, Wait: 300 * time.Millisecond})
	if err != nil || len(got) != 1 || got[0].Offset != 1 {
		t.Fatalf("topic with a delivery delay: consumed %v %v, want offset 1 only", offsetsOf(got), err)
	}
	if top, err = n.c.AlterTopic(ctx, "sched-topic", client.AlterTopicRequest{DeliveryDelayMs: new(int64(0))}); err != nil || top.DeliveryDelayMs != 0 {
		t.Fatalf("alter the delay off: %+v %v", top, err)
	}
	if bytes.Contains(top.Raw(), []byte("delivery_delay_ms")) {
		t.Errorf("a topic without a delivery delay shows the field: %s", top.Raw())
	}
}

// offsetsOf lists the messages' offsets, sorted.
func offsetsOf(ms []client.Message) []uint64 {
	var out []uint64
	for _, m := range ms {
		out = append(out, m.Offset)
	}
	slices.Sort(out)
	return out
}

// schemas are the component schemas of the OpenAPI document a node
// serves.
type schemas struct {
	c     *jsonschema.Compiler
	props map[string]map[string]json.RawMessage // schema name -> its properties
}

func servedSchemas(t *testing.T, n *node) schemas {
	t.Helper()
	status, body, _ := n.do("GET", "/v1/openapi.json", "", nil)
	if status != 200 {
		t.Fatalf("GET /v1/openapi.json: %d", status)
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://served/openapi.json", raw); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	s := schemas{c: c, props: map[string]map[string]json.RawMessage{}}
	for name, sc := range doc.Components.Schemas {
		s.props[name] = sc.Properties
	}
	return s
}

// check validates an answer object against the schema name, and, when
// want, that it carries field and the schema documents it.
func (s schemas) check(t *testing.T, name string, obj json.RawMessage, field string, want bool) {
	t.Helper()
	sc, err := s.c.Compile("mem://served/openapi.json#/components/schemas/" + name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Validate(v); err != nil {
		t.Errorf("%s %s does not match the document: %v", name, obj, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(obj, &fields); err != nil {
		t.Fatal(err)
	}
	if _, has := fields[field]; has != want {
		t.Errorf("%s %s: field %s present %v, want %v", name, obj, field, has, want)
	}
	if _, documented := s.props[name][field]; want && !documented {
		t.Errorf("%s answers %s, which the document does not name", name, field)
	}
}
