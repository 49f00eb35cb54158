package broker

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// refusingAdmission refuses commits into one topic while refuse is set,
// and runs check at every attempt (admitted or not).
type refusingAdmission struct {
	mu       sync.Mutex
	topic    string
	refuse   bool
	attempts int
	check    func()
}

func (a *refusingAdmission) Admit(topic string, p int) (func(), bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if topic != a.topic {
		return func() {}, true
	}
	a.attempts++
	if a.check != nil {
		a.check()
	}
	return func() {}, !a.refuse
}

func (a *refusingAdmission) set(refuse bool) {
	a.mu.Lock()
	a.refuse = refuse
	a.mu.Unlock()
}

func (a *refusingAdmission) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.attempts
}

// dlqNode is a broker on a fake clock whose background loops never run
// on their own (the test runs the dead-letter pass and the expiry sweep),
// with topic src (1 partition, 1 s visibility, max_deliveries 2, dead
// letters to dlq) and dlq (2 partitions).
type dlqNode struct {
	b   *Broker
	clk *clock.Fake
	adm *refusingAdmission
}

func newDLQNode(t *testing.T) *dlqNode {
	t.Helper()
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	adm := &refusingAdmission{topic: "dlq"}
	b := newTestBroker(t, Config{Now: clk.Now, Admission: adm,
		DeadLetterPass: time.Hour, ExpirySweep: time.Hour, FrontierPersist: time.Hour})
	createTestTopic(t, b, "dlq", 2)
	vis := int64(1000)
	if _, err := b.CreateTopic(testCtx(t), CreateTopicRequest{Name: "src", Partitions: 1, VisibilityTimeoutMs: &vis,
		MaxDeliveries: 2, DeadLetterTopic: "dlq"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := commitLocal(b, testCtx(t), "src", 0, []storage.Record{
		// A producer id: the dead-letter copy and a redrive must keep it out
		// of any deduplication window (HeaderDLQMsgID).
		{Key: []byte("poison"), Payload: []byte(`{"n":0}`), Headers: header.WithMsgID([]header.Header{{Name: "trace-id", Value: "t1"}}, "m-1")},
		{Key: []byte("fine"), Payload: []byte(`{"n":1}`)},
	}); err != nil {
		t.Fatal(err)
	}
	return &dlqNode{b: b, clk: clk, adm: adm}
}

func (n *dlqNode) consumeOne(t *testing.T) (Message, bool) {
	t.Helper()
	p := 0
	msgs, err := n.b.Consume(testCtx(t), ConsumeRequest{Topic: "src", Partition: &p, Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 {
		return Message{}, false
	}
	return msgs[0], true
}

// deliverPoison delivers offset 0 twice, ending each lease by expiry or
// nack; the second end holds it for the dead-letter topic.
func (n *dlqNode) deliverPoison(t *testing.T, nack bool) {
	t.Helper()
	for i := 1; i <= 2; i++ {
		m, ok := n.consumeOne(t)
		if !ok || m.Offset != 0 || m.DeliveryCount != i {
			t.Fatalf("delivery %d: %+v (ok %v); want offset 0, count %d", i, m, ok, i)
		}
		if nack {
			if err := n.b.Ack(testCtx(t), "src", m.ReceiptHandle, Nack); err != nil {
				t.Fatal(err)
			}
		} else {
			n.clk.Advance(time.Second)
			n.b.upkeep.sweepExpired()
		}
	}
}

// dlqRecords replays every record of dlq.
func (n *dlqNode) dlqRecords(t *testing.T) []Message {
	t.Helper()
	var out []Message
	for p := 0; p < 2; p++ {
		from := uint64(0)
		msgs, err := n.b.Consume(testCtx(t), ConsumeRequest{Topic: "dlq", Partition: &p, Offset: &from, Max: 100})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, msgs...)
	}
	return out
}

func (n *dlqNode) srcQueue(t *testing.T) *hosted.Queue {
	t.Helper()
	q := n.b.parts.PeekQueue("src", 0)
	if q == nil {
		t.Fatal("no queue for src/0")
	}
	return q
}

// TestDeadLetterExpiryAndNack: after its second delivery's lease expires
// (or is nacked), the poison record is never offered again — the other
// record is — and the dead-letter pass commits it to dlq, same key and
// payload, and settles it on src.
func TestDeadLetterExpiryAndNack(t *testing.T) {
	for _, tc := range []struct {
		name string
		nack bool
	}{{"expired", false}, {"nacked", true}} {
		t.Run(tc.name, func(t *testing.T) {
			n := newDLQNode(t)
			n.deliverPoison(t, tc.nack)
			m, ok := n.consumeOne(t)
			if !ok || m.Offset != 1 {
				t.Fatalf("after the hold: %+v (ok %v); want offset 1 only", m, ok)
			}
			if err := n.b.Ack(testCtx(t), "src", m.ReceiptHandle, Settle); err != nil {
				t.Fatal(err)
			}
			if _, ok := n.consumeOne(t); ok {
				t.Fatal("the held record was offered again")
			}
			if f := n.srcQueue(t).Table.Frontier(); f != 0 {
				t.Fatalf("frontier %d before the dead-letter commit; want 0", f)
			}
			n.b.deadLetters.Pass(testCtx(t))
			got := n.dlqRecords(t)
			if len(got) != 1 || string(got[0].Key) != "poison" || string(got[0].Payload) != `{"n":0}` {
				t.Fatalf("dlq holds %+v; want the poison record once", got)
			}
			want := []header.Header{
				{Name: HeaderDLQDeliveryCount, Value: "2"},
				{Name: HeaderDLQMsgID, Value: "m-1"},
				{Name: HeaderDLQOffset, Value: "0"},
				{Name: HeaderDLQPartition, Value: "0"},
				{Name: HeaderDLQReason, Value: tc.name},
				{Name: HeaderDLQTopic, Value: "src"},
				{Name: "trace-id", Value: "t1"},
			}
			if !slices.Equal(got[0].Headers, want) {
				t.Fatalf("dead-letter copy headers %v; want %v", got[0].Headers, want)
			}
			if want := KeyPartition([]byte("poison"), 2); got[0].Partition != want {
				t.Fatalf("dead-letter copy in partition %d; want %d (placed by key)", got[0].Partition, want)
			}
			if f := n.srcQueue(t).Table.Frontier(); f != 2 {
				t.Fatalf("frontier %d after the dead-letter commit; want 2 (settled)", f)
			}
			n.clk.Advance(time.Minute)
			n.b.upkeep.sweepExpired()
			if _, ok := n.consumeOne(t); ok {
				t.Fatal("a record was offered after both were settled")
			}
			n.b.deadLetters.Pass(testCtx(t))
			if got := n.dlqRecords(t); len(got) != 1 {
				t.Fatalf("a second pass dead-lettered again: %d records", len(got))
			}
		})
	}
}

// TestDeadLetterRetriesWhileRefused: while dlq refuses commits, the held
// record stays unsettled and unoffered, retried only after a backoff on
// the broker's clock; the commit always runs while the record is still
// unsettled (commit before settle); once dlq takes it, it is there once.
func TestDeadLetterRetriesWhileRefused(t *testing.T) {
	n := newDLQNode(t)
	n.adm.set(true)
	n.deliverPoison(t, true)
	q := n.srcQueue(t)
	n.adm.check = func() {
		if q.Table.Frontier() != 0 || q.Table.DeadCount() != 1 {
			t.Errorf("dead-letter commit attempted with frontier %d, %d held: the record was settled before its commit", q.Table.Frontier(), q.Table.DeadCount())
		}
	}
	n.b.deadLetters.Pass(testCtx(t))
	if a := n.adm.count(); a != 1 {
		t.Fatalf("%d commit attempts; want 1", a)
	}
	n.b.deadLetters.Pass(testCtx(t))
	if a := n.adm.count(); a != 1 {
		t.Fatalf("%d commit attempts before the backoff ended; want 1", a)
	}
	// The other record flows meanwhile; the held one is not offered.
	m, ok := n.consumeOne(t)
	if !ok || m.Offset != 1 {
		t.Fatalf("while dlq refuses: %+v (ok %v); want offset 1", m, ok)
	}
	if _, ok := n.consumeOne(t); ok {
		t.Fatal("the held record was offered while its commit was refused")
	}
	n.clk.Advance(hosted.DeadLetterBackoff(1))
	n.b.deadLetters.Pass(testCtx(t))
	if a := n.adm.count(); a != 2 {
		t.Fatalf("%d commit attempts after the first backoff; want 2", a)
	}
	n.clk.Advance(hosted.DeadLetterBackoff(2) - time.Millisecond)
	n.b.deadLetters.Pass(testCtx(t))
	if a := n.adm.count(); a != 2 {
		t.Fatalf("%d commit attempts before the doubled backoff ended; want 2", a)
	}
	if got := n.dlqRecords(t); len(got) != 0 || q.Table.Frontier() != 0 {
		t.Fatalf("dlq %d records, frontier %d while refused", len(got), q.Table.Frontier())
	}
	n.adm.set(false)
	n.clk.Advance(time.Millisecond)
	n.b.deadLetters.Pass(testCtx(t))
	if got := n.dlqRecords(t); len(got) != 1 {
		t.Fatalf("dlq holds %d records once it takes commits; want 1", len(got))
	}
	if q.Table.DeadCount() != 0 {
		t.Fatal("still held after the commit")
	}
}

// TestDeadLetterToAnotherOwner: a dead-letter partition another node owns
// gets the copy through Config.Remote (node RPC in a server), with the
// topic's incarnation.
func TestDeadLetterToAnotherOwner(t *testing.T) {
	var mu sync.Mutex
	var got []storage.Record
	var gotTopic string
	var gotInc uint64
	remote := committerFunc(func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
		mu.Lock()
		defer mu.Unlock()
		gotTopic, gotInc, got = topic, inc, append(got, recs...)
		return nil
	})
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	b := newTestBroker(t, Config{Now: clk.Now, Remote: remote, DeadLetterPass: time.Hour, ExpirySweep: time.Hour})
	createTestTopic(t, b, "dlq", 1)
	if err := b.meta.SetAssignments(testCtx(t), []meta.Assignment{{Topic: "dlq", Partition: 0, Owner: "n2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateTopic(testCtx(t), CreateTopicRequest{Name: "src", Partitions: 1, MaxDeliveries: 1, DeadLetterTopic: "dlq"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := commitLocal(b, testCtx(t), "src", 0, []storage.Record{{Payload: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	p := 0
	msgs, err := b.Consume(testCtx(t), ConsumeRequest{Topic: "src", Partition: &p})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("consume: %v %v", msgs, err)
	}
	if err := b.Ack(testCtx(t), "src", msgs[0].ReceiptHandle, Nack); err != nil {
		t.Fatal(err)
	}
	b.deadLetters.Pass(testCtx(t))
	dlq, _ := b.meta.Topic("dlq")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || string(got[0].Payload) != "x" || gotTopic != "dlq" || gotInc != dlq.Incarnation {
		t.Fatalf("remote got %d records for %q incarnation %d; want 1 for dlq incarnation %d", len(got), gotTopic, gotInc, dlq.Incarnation)
	}
	if f := b.parts.PeekQueue("src", 0).Table.Frontier(); f != 1 {
		t.Fatalf("frontier %d after the remote commit; want 1", f)
	}
}

// TestDeadLetterPolicyOffRevives: a held record whose topic's policy is
// turned off before its commit is offered again.
func TestDeadLetterPolicyOffRevives(t *testing.T) {
	n := newDLQNode(t)
	n.adm.set(true)
	n.deliverPoison(t, true)
	n.b.deadLetters.Pass(testCtx(t))
	zero := 0
	if _, err := n.b.AlterTopic(testCtx(t), "src", AlterTopicRequest{MaxDeliveries: &zero}); err != nil {
		t.Fatal(err)
	}
	n.b.deadLetters.Pass(testCtx(t))
	m, ok := n.consumeOne(t)
	if !ok || m.Offset != 0 || m.DeliveryCount != 3 {
		t.Fatalf("after turning the policy off: %+v (ok %v); want offset 0, third delivery", m, ok)
	}
}

// TestDeadLetterBackoff: 250 ms doubling, capped at 30 s.
func TestDeadLetterBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 250 * time.Millisecond, 2: 500 * time.Millisecond, 3: time.Second, 8: 30 * time.Second, 50: 30 * time.Second} {
		if got := hosted.DeadLetterBackoff(n); got != want {
			t.Errorf("backoff after %d failures: %v; want %v", n, got, want)
		}
	}
}

type committerFunc func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error

func (f committerFunc) Commit(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
	return f(ctx, topic, inc, p, recs)
}
