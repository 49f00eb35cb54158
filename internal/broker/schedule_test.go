package broker

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/storage"
)

// scheduledRecs builds records: a due time of 0 means an ordinary record.
func scheduledRecs(dues ...int64) []storage.Record {
	recs := make([]storage.Record, len(dues))
	for i, due := range dues {
		recs[i].Payload = []byte("r" + strconv.Itoa(i))
		if due != 0 {
			recs[i].Headers = header.WithDeliverAt(nil, due)
		}
	}
	return recs
}

func offsetsOf(ms []Message) []uint64 {
	out := make([]uint64, len(ms))
	for i, m := range ms {
		out[i] = m.Offset
	}
	return out
}

func (n *testNode) ackAll(topic string, ms []Message) {
	n.t.Helper()
	for _, m := range ms {
		if err := n.b.Ack(context.Background(), topic, m.ReceiptHandle, Settle); err != nil {
			n.t.Fatalf("ack offset %d: %v", m.Offset, err)
		}
	}
}

// A record scheduled for later is not offered before it is due, never
// holds back the records behind it (they are delivered, acked and the
// frontier passes it), and is offered once due.
func TestScheduledRecordWaitsWithoutBlocking(t *testing.T) {
	clk := &pinnedNow{t: time.Unix(1_700_000_000, 0)}
	n := newTestNode(t, Config{FrontierPersist: time.Hour, Now: clk.now})
	n.createTopic("jobs", 1)
	due := clk.now().Add(time.Hour).UnixMilli()
	if err := commitLocal(n.b, context.Background(), "jobs", 0, scheduledRecs(due, 0, 0)); err != nil {
		t.Fatal(err)
	}
	got, err := n.consume("jobs", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if o := offsetsOf(got); len(o) != 2 || o[0] != 1 || o[1] != 2 {
		t.Fatalf("consumed offsets %v, want [1 2]: the scheduled record 0 is not due", o)
	}
	n.ackAll("jobs", got)
	q := n.b.parts.PeekQueue("jobs", 0)
	if f := q.Table.Frontier(); f != 3 {
		t.Fatalf("frontier %d, want 3: a scheduled record must not hold it back", f)
	}
	v, err := n.b.DescribeTopic("jobs")
	if err != nil {
		t.Fatal(err)
	}
	if s := v.PartitionStats[0].Scheduled; s == nil || *s != 1 {
		t.Fatalf("describe scheduled %v, want 1", s)
	}
	n.b.upkeep.persistFrontiers()
	if g := n.metric(`narad_scheduled_messages{topic="jobs"}`); g != 1 {
		t.Fatalf("narad_scheduled_messages %v, want 1", g)
	}
	clk.advance(time.Hour - time.Millisecond)
	if got, _ := n.consume("jobs", 0, 10); len(got) != 0 {
		t.Fatalf("consumed %v a millisecond before the due time", offsetsOf(got))
	}
	clk.advance(time.Millisecond)
	got, err = n.consume("jobs", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if o := offsetsOf(got); len(o) != 1 || o[0] != 0 {
		t.Fatalf("at the due time consumed %v, want [0]", o)
	}
	if at, ok := header.DeliverAtOf(got[0].Headers); !ok || at != due {
		t.Fatalf("the delivered record's due time %d %v, want %d", at, ok, due)
	}
	n.ackAll("jobs", got)
	if got, _ := n.consume("jobs", 0, 10); len(got) != 0 {
		t.Fatalf("an acked scheduled record came back: %v", offsetsOf(got))
	}
	if s := q.Scheduled(); s != 0 {
		t.Fatalf("%d still scheduled", s)
	}
	n.b.upkeep.persistFrontiers()
	if g := n.metric(`narad_scheduled_messages{topic="jobs"}`); g != 0 {
		t.Fatalf("narad_scheduled_messages %v once nothing is scheduled, want 0", g)
	}
}

// A scheduled record survives a restart: its schedule entry was made
// durable before the frontier that passed it.
func TestScheduledRecordSurvivesRestart(t *testing.T) {
	clk := &pinnedNow{t: time.Unix(1_700_000_000, 0)}
	n := newTestNode(t, Config{FrontierPersist: time.Hour, Now: clk.now})
	n.createTopic("jobs", 1)
	due := clk.now().Add(2 * time.Hour).UnixMilli()
	if err := commitLocal(n.b, context.Background(), "jobs", 0, scheduledRecs(due, 0)); err != nil {
		t.Fatal(err)
	}
	got, err := n.consume("jobs", 0, 10)
	if err != nil || len(got) != 1 || got[0].Offset != 1 {
		t.Fatalf("consumed %v, %v; want offset 1 only", offsetsOf(got), err)
	}
	n.ackAll("jobs", got)
	n.b.upkeep.persistFrontiers()
	if err := n.fs.LoseUnsyncedWrites(); err != nil { // as a power cut would
		t.Fatal(err)
	}
	n.restart(nil)
	if got, _ := n.consume("jobs", 0, 10); len(got) != 0 {
		t.Fatalf("after restart consumed %v before the due time", offsetsOf(got))
	}
	clk.advance(2 * time.Hour)
	got, err = n.consume("jobs", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if o := offsetsOf(got); len(o) != 1 || o[0] != 0 {
		t.Fatalf("after restart, at the due time consumed %v, want [0]", o)
	}
}

// A due record nacked or left to expire is offered again; its handle
// settles it as any other.
func TestDueRecordRedelivers(t *testing.T) {
	clk := &pinnedNow{t: time.Unix(1_700_000_000, 0)}
	n := newTestNode(t, Config{FrontierPersist: time.Hour, Now: clk.now})
	n.createTopic("jobs", 1)
	due := clk.now().Add(time.Minute).UnixMilli()
	if err := commitLocal(n.b, context.Background(), "jobs", 0, scheduledRecs(due)); err != nil {
		t.Fatal(err)
	}
	if got, _ := n.consume("jobs", 0, 10); len(got) != 0 {
		t.Fatalf("consumed %v before due", offsetsOf(got))
	}
	clk.advance(time.Minute)
	first, err := n.consume("jobs", 0, 10)
	if err != nil || len(first) != 1 {
		t.Fatalf("at due consumed %v, %v", offsetsOf(first), err)
	}
	if err := n.b.Ack(context.Background(), "jobs", first[0].ReceiptHandle, Nack); err != nil {
		t.Fatal(err)
	}
	second, err := n.consume("jobs", 0, 10)
	if err != nil || len(second) != 1 || second[0].Offset != 0 || second[0].DeliveryCount != 2 {
		t.Fatalf("after nack consumed %+v, %v; want offset 0 on its second delivery", second, err)
	}
	if err := n.b.Ack(context.Background(), "jobs", first[0].ReceiptHandle, Settle); err == nil {
		t.Fatal("the nacked handle settled the record")
	}
	n.ackAll("jobs", second)
}

// Produce stamps a record's due time from its own delay or deliver_at,
// else from the topic's delivery_delay; a record due at once (its own
// delay 0, a deliver_at in the past) carries none.
func TestProduceStampsTheDueTime(t *testing.T) {
	clk := &pinnedNow{t: time.Unix(1_700_000_000, 0)}
	b := newTestBroker(t, Config{Now: clk.now})
	ctx := testCtx(t)
	hour := "1h"
	if _, err := b.CreateTopic(ctx, CreateTopicRequest{Name: "later", Partitions: 1, DeliveryDelay: &hour}, ""); err != nil {
		t.Fatal(err)
	}
	if v, err := b.DescribeTopic("later"); err != nil || v.DeliveryDelayMs != 3_600_000 {
		t.Fatalf("delivery_delay_ms %d, %v; want 3600000", v.DeliveryDelayMs, err)
	}
	now := clk.now().UnixMilli()
	zero, ninety := time.Duration(0), 90*time.Second
	past, future := now-5000, now+7000
	seq := b.wal.LastSeq()
	for _, r := range []ProduceRecord{
		{Payload: []byte("topic default")},
		{Payload: []byte("own 0"), Delay: &zero},
		{Payload: []byte("own 90s"), Delay: &ninety},
		{Payload: []byte("past"), DeliverAt: &past},
		{Payload: []byte("at"), DeliverAt: &future},
	} {
		if err := b.Produce(ctx, "later", r); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{"topic default": now + 3_600_000, "own 0": 0, "own 90s": now + 90_000, "past": 0, "at": future}
	for _, r := range walSince(t, b, seq) {
		due, ok := header.DeliverAtOf(r.Headers)
		if w := want[string(r.Payload)]; due != w || ok != (w != 0) {
			t.Errorf("%s: due %d (%v), want %d", r.Payload, due, ok, w)
		}
	}
	for _, bad := range []string{"-1s", "400d", "soon"} {
		bad := bad
		if _, err := b.AlterTopic(ctx, "later", AlterTopicRequest{DeliveryDelay: &bad}); err == nil || !strings.Contains(err.Error(), "delivery_delay") {
			t.Errorf("alter delivery_delay %q: %v, want a refusal naming delivery_delay", bad, err)
		}
	}
	if v, _ := b.DescribeTopic("later"); v.DeliveryDelayMs != 3_600_000 {
		t.Fatalf("a refused alter changed delivery_delay_ms to %d", v.DeliveryDelayMs)
	}
}

// A scheduled record delivered after it fell due is dead-lettered like
// any other once its deliveries are used up, and its schedule entry is
// settled only after the dead-letter copy is committed.
func TestDueRecordIsDeadLettered(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	b := newTestBroker(t, Config{Now: clk.Now, DeadLetterPass: time.Hour, ExpirySweep: time.Hour, FrontierPersist: time.Hour})
	createTestTopic(t, b, "dlq", 1)
	vis := int64(1000)
	if _, err := b.CreateTopic(testCtx(t), CreateTopicRequest{Name: "src", Partitions: 1, VisibilityTimeoutMs: &vis,
		MaxDeliveries: 2, DeadLetterTopic: "dlq"}, ""); err != nil {
		t.Fatal(err)
	}
	due := clk.Now().Add(time.Minute).UnixMilli()
	if err := commitLocal(b, testCtx(t), "src", 0, scheduledRecs(due)); err != nil {
		t.Fatal(err)
	}
	p := 0
	consume := func() []Message {
		t.Helper()
		ms, err := b.Consume(testCtx(t), ConsumeRequest{Topic: "src", Partition: &p, Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	if ms := consume(); len(ms) != 0 {
		t.Fatalf("consumed %v before due", offsetsOf(ms))
	}
	clk.Advance(time.Minute)
	for i := 1; i <= 2; i++ {
		ms := consume()
		if len(ms) != 1 || ms[0].DeliveryCount != i {
			t.Fatalf("delivery %d: %+v", i, ms)
		}
		if i == 1 {
			if err := b.Ack(testCtx(t), "src", ms[0].ReceiptHandle, Nack); err != nil {
				t.Fatal(err)
			}
		} else {
			clk.Advance(time.Second)
			b.upkeep.sweepExpired()
		}
	}
	if ms := consume(); len(ms) != 0 {
		t.Fatalf("the held record was offered again: %v", offsetsOf(ms))
	}
	q := b.parts.PeekQueue("src", 0)
	if q.Scheduled() != 0 || q.ScheduleOut() != 1 {
		t.Fatalf("before the dead-letter commit: %d waiting, %d out; want 0 and 1", q.Scheduled(), q.ScheduleOut())
	}
	b.deadLetters.Pass(testCtx(t))
	from := uint64(0)
	got, err := b.Consume(testCtx(t), ConsumeRequest{Topic: "dlq", Partition: &p, Offset: &from, Max: 10})
	if err != nil || len(got) != 1 || string(got[0].Payload) != "r0" {
		t.Fatalf("dlq holds %+v, %v; want the scheduled record", got, err)
	}
	if v, _ := header.Get(got[0].Headers, HeaderDLQReason); v != "expired" {
		t.Fatalf("dead-letter reason %q, want expired", v)
	}
	if q.ScheduleOut() != 0 {
		t.Fatalf("%d schedule entries out after the dead-letter commit, want 0 (settled)", q.ScheduleOut())
	}
}

// On a topic with message groups a scheduled record leaves its group's
// order when its turn comes: it is filed, the group's next record is
// offered at once, and the scheduled one when due.
func TestScheduledRecordLeavesItsGroup(t *testing.T) {
	clk := &pinnedNow{t: time.Unix(1_700_000_000, 0)}
	n := newTestNode(t, Config{FrontierPersist: time.Hour, Now: clk.now})
	group := "group"
	if _, err := n.b.CreateTopic(context.Background(), CreateTopicRequest{Name: "jobs", Partitions: 1, Ordering: &group}, ""); err != nil {
		t.Fatal(err)
	}
	recs := scheduledRecs(clk.now().Add(time.Hour).UnixMilli(), 0, 0)
	for i := range recs {
		recs[i].Key = []byte("c42")
	}
	if err := commitLocal(n.b, context.Background(), "jobs", 0, recs); err != nil {
		t.Fatal(err)
	}
	got, err := n.consume("jobs", 0, 1)
	if err != nil || len(got) != 1 || got[0].Offset != 1 {
		t.Fatalf("consumed %v, %v; want offset 1: the scheduled 0 is filed, not its group's head", offsetsOf(got), err)
	}
	if more, _ := n.consume("jobs", 0, 1); len(more) != 0 {
		t.Fatalf("consumed %v while offset 1 of the group is leased", offsetsOf(more))
	}
	n.ackAll("jobs", got)
	if got, _ = n.consume("jobs", 0, 10); len(got) != 1 || got[0].Offset != 2 {
		t.Fatalf("after the ack consumed %v, want [2]", offsetsOf(got))
	}
	n.ackAll("jobs", got)
	clk.advance(time.Hour)
	if got, _ = n.consume("jobs", 0, 10); len(got) != 1 || got[0].Offset != 0 {
		t.Fatalf("at the due time consumed %v, want [0]", offsetsOf(got))
	}
}

// A due record's delivery count is durable like any other's: after a
// restart it continues from what the counts file held.
func TestDueRecordCountSurvivesRestart(t *testing.T) {
	clk := &pinnedNow{t: time.Unix(1_700_000_000, 0)}
	n := newTestNode(t, Config{FrontierPersist: time.Hour, Now: clk.now})
	n.createTopic("jobs", 1)
	if err := commitLocal(n.b, context.Background(), "jobs", 0, scheduledRecs(clk.now().Add(time.Minute).UnixMilli(), 0)); err != nil {
		t.Fatal(err)
	}
	got, _ := n.consume("jobs", 0, 10)
	n.ackAll("jobs", got) // offset 1; 0 is filed
	clk.advance(time.Minute)
	for i := 1; i <= 2; i++ {
		ms, err := n.consume("jobs", 0, 10)
		if err != nil || len(ms) != 1 || ms[0].Offset != 0 || ms[0].DeliveryCount != i {
			t.Fatalf("delivery %d: %+v, %v", i, ms, err)
		}
		if err := n.b.Ack(context.Background(), "jobs", ms[0].ReceiptHandle, Nack); err != nil {
			t.Fatal(err)
		}
	}
	clk.advance(hosted.CountsEvery)
	n.b.upkeep.persistFrontiers()
	n.restart(nil)
	ms, err := n.consume("jobs", 0, 10)
	if err != nil || len(ms) != 1 || ms[0].Offset != 0 || ms[0].DeliveryCount != 3 {
		t.Fatalf("after the restart: %+v, %v; want offset 0 on its third delivery", ms, err)
	}
}
