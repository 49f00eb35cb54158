package broker

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// deadLettered is a dlqNode whose poison record is in dlq.
func deadLettered(t *testing.T) *dlqNode {
	t.Helper()
	n := newDLQNode(t)
	n.deliverPoison(t, true)
	n.b.deadLetters.Pass(testCtx(t))
	if got := n.dlqRecords(t); len(got) != 1 {
		t.Fatalf("dlq holds %d records; want 1", len(got))
	}
	return n
}

// TestRedriveMovesThenSettles: redrive produces the dead-lettered record
// into its target (durable in the ingress WAL, same key and payload) and
// settles it in the dead-letter topic; a second redrive finds nothing.
func TestRedriveMovesThenSettles(t *testing.T) {
	n := deadLettered(t)
	moved, err := n.b.Redrive(testCtx(t), "dlq", "src", 10)
	if err != nil || moved != 1 {
		t.Fatalf("redrive: %d, %v; want 1 moved", moved, err)
	}
	recs, err := n.b.wal.Read(1, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Topic != "src" || string(recs[0].Key) != "poison" || string(recs[0].Payload) != `{"n":0}` {
		t.Fatalf("ingress WAL holds %+v; want the poison record for src", recs)
	}
	if want := []header.Header{{Name: "trace-id", Value: "t1"}}; !slices.Equal(recs[0].Headers, want) {
		t.Fatalf("redriven copy headers %v; want its own, without narad-dlq-*: %v", recs[0].Headers, want)
	}
	for p := 0; p < 2; p++ {
		msgs, err := n.b.Consume(testCtx(t), ConsumeRequest{Topic: "dlq", Partition: &p})
		if err != nil || len(msgs) != 0 {
			t.Fatalf("dlq/%d after redrive: %v %v; want nothing left", p, msgs, err)
		}
	}
	if moved, err := n.b.Redrive(testCtx(t), "dlq", "src", 10); err != nil || moved != 0 {
		t.Fatalf("second redrive: %d, %v; want 0", moved, err)
	}
}

// TestRedriveRefusedProduceKeepsTheRecord: a target that refuses the copy
// (its schema) ends the redrive with the refusal, and the record stays in
// the dead-letter topic, offered at once, its delivery not counted.
func TestRedriveRefusedProduceKeepsTheRecord(t *testing.T) {
	n := deadLettered(t)
	schema := json.RawMessage(`{"type":"object","required":["id"]}`)
	if _, err := n.b.CreateTopic(testCtx(t), CreateTopicRequest{Name: "strict", Partitions: 1, Schema: schema}, ""); err != nil {
		t.Fatal(err)
	}
	moved, err := n.b.Redrive(testCtx(t), "dlq", "strict", 10)
	if ae, ok := apierr.From(err); !ok || ae.Status != 400 || moved != 0 {
		t.Fatalf("redrive into a refusing schema: %d, %v; want a 400 and nothing moved", moved, err)
	}
	got := n.dlqRecords(t)
	p := got[0].Partition
	msgs, err := n.b.Consume(testCtx(t), ConsumeRequest{Topic: "dlq", Partition: &p})
	if err != nil || len(msgs) != 1 || msgs[0].DeliveryCount != 1 {
		t.Fatalf("after the refused redrive: %+v %v; want the record, first delivery", msgs, err)
	}
}

// TestRedriveRefusals: bad max, unknown topics, the topic itself.
func TestRedriveRefusals(t *testing.T) {
	n := deadLettered(t)
	for _, c := range []struct {
		name, from, to string
		max, status    int
	}{
		{"max 0", "dlq", "src", 0, 400},
		{"max over", "dlq", "src", MaxRedrive + 1, 400},
		{"unknown source", "nope", "src", 10, 404},
		{"unknown target", "dlq", "nope", 10, 404},
		{"into itself", "dlq", "dlq", 10, 400},
	} {
		moved, err := n.b.Redrive(testCtx(t), c.from, c.to, c.max)
		if ae, ok := apierr.From(err); !ok || ae.Status != c.status || moved != 0 {
			t.Errorf("%s: %d, %v; want %d", c.name, moved, err, c.status)
		}
	}
	if got := n.dlqRecords(t); len(got) != 1 {
		t.Fatalf("refusals changed dlq: %d records", len(got))
	}
}

// TestRedriveDropsAProducerID: a record produced into the dead-letter
// topic with a producer id is redriven without it: the copy is not a
// retry, and the target's window might still hold the id and drop it.
func TestRedriveDropsAProducerID(t *testing.T) {
	n := newDLQNode(t)
	if err := commitLocal(n.b, testCtx(t), "dlq", 0, []storage.Record{
		{Key: []byte("k"), Payload: []byte(`{"n":9}`), Headers: header.WithMsgID(nil, "m-9")},
	}); err != nil {
		t.Fatal(err)
	}
	if moved, err := n.b.Redrive(testCtx(t), "dlq", "src", 10); err != nil || moved != 1 {
		t.Fatalf("redrive: %d, %v; want 1 moved", moved, err)
	}
	recs, err := n.b.wal.Read(1, 100, 1<<20)
	if err != nil || len(recs) != 1 {
		t.Fatalf("ingress WAL: %+v, %v; want the one copy", recs, err)
	}
	if id, ok := header.MsgIDOf(recs[0].Headers); ok {
		t.Fatalf("redriven copy still carries %s=%q", header.MsgID, id)
	}
}
