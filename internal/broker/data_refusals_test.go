package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

func (a *admission) setClosed(closed bool) {
	a.mu.Lock()
	a.closed = closed
	a.mu.Unlock()
}

// giveAway makes node n2 the owner of topic/p in the metastore, as a move
// would.
func giveAway(t *testing.T, b *Broker, topic string, p int) {
	t.Helper()
	if err := b.meta.SetAssignments(testCtx(t), []meta.Assignment{{Topic: topic, Partition: p, Owner: "n2"}}); err != nil {
		t.Fatal(err)
	}
}

// A commit — the local side of the commit seam dispatch and fan-out share
// — refuses with a typed refusal every case its callers act on, and
// commits nothing when it refuses.
func commitRefusalsAreTyped(t *testing.T, b *Broker, moves *admission) {
	ctx := testCtx(t)
	createTestTopic(t, b, "t", 2)
	giveAway(t, b, "t", 1)
	old, _ := b.meta.Topic("t")
	if err := b.DeleteTopic(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	createTestTopic(t, b, "t", 2) // a new incarnation of the name
	cur, _ := b.meta.Topic("t")
	giveAway(t, b, "t", 1)
	one := []storage.Record{{Payload: []byte("x")}}

	cases := []struct {
		name        string
		topic       string
		incarnation uint64
		partition   int
		status      int
		kind        refusal.Kind
		says        string
	}{
		{"unknown topic", "nope", 0, 0, 404, refusal.ErrTopicNotFound, `topic "nope" does not exist`},
		{"deleted incarnation", "t", old.Incarnation, 0, 404, refusal.ErrIncarnationGone, fmt.Sprintf("records of incarnation %d, which was deleted", old.Incarnation)},
		{"incarnation not known yet", "t", cur.Incarnation + 1000, 0, 503, refusal.ErrIncarnationAhead, "knows only"},
		{"partition out of range", "t", cur.Incarnation, 2, 400, refusal.ErrPartitionRange, `partition 2 is out of range: "t" has 2 partitions`},
		{"negative partition", "t", 0, -1, 400, refusal.ErrPartitionRange, "partition -1 is out of range"},
		{"not the owner", "t", cur.Incarnation, 1, 503, refusal.ErrNotOwner, `partition 1 of "t" is not owned by this node`},
	}
	for _, c := range cases {
		err := commitInc(b, ctx, c.topic, c.incarnation, c.partition, one)
		refused(t, c.name, err, c.status, c.kind, c.says)
	}
	// A deleted incarnation is a topic that is not there, for dispatch's
	// discard; one not known yet is not.
	if err := commitInc(b, ctx, "t", old.Incarnation, 0, one); !errors.Is(err, refusal.ErrTopicNotFound) {
		t.Fatalf("deleted incarnation: %v is not ErrTopicNotFound", err)
	}
	if err := commitInc(b, ctx, "t", cur.Incarnation+1000, 0, one); errors.Is(err, refusal.ErrTopicNotFound) {
		t.Fatalf("an incarnation not known yet must not read as gone: %v", err)
	}

	// Frozen for a move (the admission hook refuses): refused until the
	// freeze lifts.
	moves.setClosed(true)
	refused(t, "frozen", commitInc(b, ctx, "t", cur.Incarnation, 0, one), 503, refusal.ErrFrozen, `partition 0 of "t" is being moved`)
	moves.setClosed(false)

	if l := b.parts.Peek("t", 0); l != nil && l.HWM() != 0 {
		t.Fatalf("refused commits moved the high watermark to %d", l.HWM())
	}
	if err := commitInc(b, ctx, "t", cur.Incarnation, 0, one); err != nil {
		t.Fatalf("the current incarnation commits: %v", err)
	}
	if err := commitLocal(b, ctx, "t", 0, one); err != nil {
		t.Fatalf("incarnation 0 commits to the current one: %v", err)
	}
	if hwm, err := b.CommittedHWM("t", 0); err != nil || hwm != 2 {
		t.Fatalf("high watermark %d, %v: want the 2 accepted commits only", hwm, err)
	}
}

// Consume and replay refuse malformed or impossible requests before any
// lease is taken.
func consumeRefusals(t *testing.T, b *Broker) {
	ctx := testCtx(t)
	createTestTopic(t, b, "cq", 2)
	commitSized(t, b, "cq", 0, 3, 8)
	giveAway(t, b, "cq", 1)
	p := func(v int) *int { return &v }
	off := uint64(0)
	cases := []struct {
		name   string
		req    ConsumeRequest
		status int
		kind   refusal.Kind
		says   string
	}{
		{"unknown topic", ConsumeRequest{Topic: "nope"}, 404, refusal.ErrTopicNotFound, "does not exist"},
		{"bad name", ConsumeRequest{Topic: ""}, 400, "", "1..249"},
		{"max over 1000", ConsumeRequest{Topic: "cq", Max: 1001}, 400, "", "max must be 1..1000, got 1001"},
		{"negative max", ConsumeRequest{Topic: "cq", Max: -1}, 400, "", "got -1"},
		{"negative wait", ConsumeRequest{Topic: "cq", Wait: -time.Second}, 400, "", "wait must not be negative"},
		{"partition out of range", ConsumeRequest{Topic: "cq", Partition: p(2)}, 400, refusal.ErrPartitionRange, `partition 2 is out of range: "cq" has 2 partitions`},
		{"offset without partition", ConsumeRequest{Topic: "cq", Offset: &off}, 400, "", "offset needs partition"},
		{"pinned to a partition served elsewhere", ConsumeRequest{Topic: "cq", Partition: p(1)}, 503, refusal.ErrNotOwner, `partition 1 of "cq" is not served by this node`},
	}
	for _, c := range cases {
		msgs, err := b.Consume(ctx, c.req)
		refused(t, c.name, err, c.status, c.kind, c.says)
		if len(msgs) != 0 {
			t.Fatalf("%s: delivered %d records", c.name, len(msgs))
		}
	}
	if n := inFlight(b, "cq"); n != 0 {
		t.Fatalf("refused consumes left %d leases out", n)
	}
	// An unpinned consume serves what this node owns.
	msgs, err := b.Consume(ctx, ConsumeRequest{Topic: "cq", Max: 10})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("unpinned consume: %d records, %v", len(msgs), err)
	}
}

// Ack, extend and nack prove a lease with its receipt handle: a malformed
// or impossible handle is 400, a handle whose lease is gone — settled,
// released, superseded, or never issued — is 410, and a refused ack
// changes no lease.
func ackRefusals(t *testing.T, b *Broker) {
	ctx := testCtx(t)
	createTestTopic(t, b, "aq", 2)
	commitSized(t, b, "aq", 0, 4, 8)
	giveAway(t, b, "aq", 1)
	msgs, err := b.Consume(ctx, ConsumeRequest{Topic: "aq", Max: 3})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("consume: %d, %v", len(msgs), err)
	}
	acked, nacked, held := msgs[0].ReceiptHandle, msgs[1].ReceiptHandle, msgs[2].ReceiptHandle
	if err := b.Ack(ctx, "aq", acked, Settle); err != nil {
		t.Fatal(err)
	}
	if err := b.Ack(ctx, "aq", nacked, Nack); err != nil {
		t.Fatal(err)
	}
	forged := fmt.Sprintf("0:%d:%d", msgs[2].Offset, 12345) // the right record, a nonce never issued
	cases := []struct {
		name   string
		topic  string
		handle string
		op     AckOp
		status int
		kind   refusal.Kind
		says   string
	}{
		{"unknown topic", "nope", held, Settle, 404, refusal.ErrTopicNotFound, "does not exist"},
		{"malformed handle", "aq", "zero:one", Settle, 400, "", `receipt_handle "zero:one" is malformed: want 3 fields partition:offset:nonce, got 2;`},
		{"handle past the partitions", "aq", "5:0:1", Settle, 400, refusal.ErrPartitionRange, `names partition 5, but "aq" has 2 partitions`},
		{"handle of a partition served elsewhere", "aq", "1:0:1", Settle, 503, refusal.ErrNotOwner, `partition 1 of "aq" is not served by this node`},
		{"ack twice", "aq", acked, Settle, 410, "", fmt.Sprintf("the lease on the record at offset %d of partition 0 has ended: the record was settled (acked, dead-lettered or purged); there is nothing left to ack", msgs[0].Offset)},
		{"extend a settled lease", "aq", acked, Extend, 410, "", "has ended: the record was settled (acked, dead-lettered or purged); there is nothing left to extend"},
		{"nack a settled lease", "aq", acked, Nack, 410, "", "has ended: the record was settled (acked, dead-lettered or purged); there is nothing left to nack"},
		{"ack a released lease", "aq", nacked, Settle, 410, "", "lapsed"},
		{"forged nonce", "aq", forged, Settle, 410, "", "lapsed"},
	}
	for _, c := range cases {
		refused(t, c.name, b.Ack(ctx, c.topic, c.handle, c.op), c.status, c.kind, c.says)
	}
	if n := inFlight(b, "aq"); n != 1 {
		t.Fatalf("after the refusals %d leases are out, want the 1 still held", n)
	}
	if err := b.Ack(ctx, "aq", held, Extend); err != nil {
		t.Fatalf("extend the held lease: %v", err)
	}
	if err := b.Ack(ctx, "aq", held, Settle); err != nil {
		t.Fatalf("ack the held lease: %v", err)
	}

	// The batch form: refusals of the whole batch, then each handle's
	// outcome as the single form would answer.
	_, err = b.AckBatch(ctx, "aq", nil)
	refused(t, "empty batch", err, 400, "", "receipt_handles is empty")
	_, err = b.AckBatch(ctx, "aq", make([]string, MaxAckBatch+1))
	refused(t, "batch over the cap", err, 413, "", "10001 receipt handles is over the cap of 10000")
	_, err = b.AckBatch(ctx, "nope", []string{held})
	refused(t, "batch on an unknown topic", err, 404, refusal.ErrTopicNotFound, "does not exist")
	again, err := b.Consume(ctx, ConsumeRequest{Topic: "aq", Max: 1}) // the nacked record, leased anew
	if err != nil || len(again) != 1 {
		t.Fatalf("consume after nack: %v, %v", again, err)
	}
	errs, err := b.AckBatch(ctx, "aq", []string{again[0].ReceiptHandle, held, "bad", "1:0:1"})
	if err != nil || len(errs) != 4 {
		t.Fatalf("batch: %v, %v", errs, err)
	}
	if errs[0] != nil {
		t.Errorf("a live lease: %v", errs[0])
	}
	if n := inFlight(b, "aq"); n != 0 {
		t.Errorf("after the batch ack %d leases are still out: the batch form settles", n)
	}
	refused(t, "batch: a settled lease", errs[1], 410, "", "the record was settled")
	refused(t, "batch: a malformed handle", errs[2], 400, "", `receipt_handle "bad"`)
	refused(t, "batch: served elsewhere", errs[3], 503, refusal.ErrNotOwner, "not served by this node")
}

// WaitTopic, the cross-node half of a long-poll, refuses an unknown topic
// at once and otherwise returns when woken or when the wait ends.
func waitTopicRefusesAnUnknownTopic(t *testing.T, b *Broker) {
	_, err := b.WaitTopic(context.Background(), "nope", time.Hour)
	refused(t, "wait on an unknown topic", err, 404, refusal.ErrTopicNotFound, "does not exist")
}
