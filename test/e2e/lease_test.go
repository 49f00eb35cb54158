package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

func oneMessage(t *testing.T, n *node, topic string, wait time.Duration) client.Message {
	t.Helper()
	msgs, err := n.c.Consume(ctxT(t), topic, client.ConsumeOptions{Wait: wait})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("consume %s: %d messages, %v", topic, len(msgs), err)
	}
	return msgs[0]
}

// TestLeaseExpiryRedelivers: an unacked record comes back at the visibility
// timeout (not before), with delivery_count 2; the late ack gets 410.
func TestLeaseExpiryRedelivers(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "vt", Partitions: 1, VisibilityTimeoutMs: 1000})
	if err := n.c.Produce(ctx, "vt", []byte("x"), client.ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	first := oneMessage(t, n, "vt", 5*time.Second)
	leasedAt := time.Now()
	// While the lease is live, nothing is available.
	if msgs, err := n.c.Consume(ctx, "vt", client.ConsumeOptions{}); err != nil || len(msgs) != 0 {
		t.Fatalf("record delivered twice while leased: %v %v", msgs, err)
	}
	second := oneMessage(t, n, "vt", 5*time.Second)
	if waited := time.Since(leasedAt); waited < 900*time.Millisecond {
		t.Fatalf("redelivered after %v, before the 1 s visibility timeout", waited)
	}
	if second.Offset != first.Offset || second.DeliveryCount != 2 || second.ReceiptHandle == first.ReceiptHandle {
		t.Fatalf("redelivery: %+v after %+v", second, first)
	}
	if err := n.c.Ack(ctx, "vt", first.ReceiptHandle); client.StatusOf(err) != http.StatusGone {
		t.Fatalf("late ack: %v, want 410", err)
	}
	if err := n.c.Ack(ctx, "vt", second.ReceiptHandle); err != nil {
		t.Fatalf("live ack: %v", err)
	}
}

// TestExtendKeepsLeaseAlive: extending before expiry keeps the record away
// from other consumers past the original expiry.
func TestExtendKeepsLeaseAlive(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "ext", Partitions: 1, VisibilityTimeoutMs: 1000})
	n.c.Produce(ctx, "ext", []byte("x"), client.ProduceOptions{})
	m := oneMessage(t, n, "ext", 5*time.Second)
	end := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(end) {
		if err := n.c.Extend(ctx, "ext", m.ReceiptHandle); err != nil {
			t.Fatalf("extend: %v", err)
		}
		// A consumer polling meanwhile never sees the record.
		msgs, err := n.c.Consume(ctx, "ext", client.ConsumeOptions{Wait: 400 * time.Millisecond})
		if err != nil || len(msgs) != 0 {
			t.Fatalf("extended lease leaked its record: %v %v", msgs, err)
		}
	}
	if err := n.c.Ack(ctx, "ext", m.ReceiptHandle); err != nil {
		t.Fatalf("ack after 2.5 s of extends on a 1 s lease: %v", err)
	}
}

// TestNackWakesWaitingConsumer: a nack makes the record available at once
// and wakes a consumer already long-polling.
func TestNackWakesWaitingConsumer(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "nk", Partitions: 1})
	n.c.Produce(ctx, "nk", []byte("x"), client.ProduceOptions{})
	m := oneMessage(t, n, "nk", 5*time.Second)
	got := make(chan client.Message, 1)
	go func() {
		msgs, err := n.c.Consume(ctx, "nk", client.ConsumeOptions{Wait: 10 * time.Second})
		if err == nil && len(msgs) == 1 {
			got <- msgs[0]
		}
		close(got)
	}()
	time.Sleep(100 * time.Millisecond) // let it park; the assertion below is on the result
	t0 := time.Now()
	if err := n.c.Nack(ctx, "nk", m.ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	r, ok := <-got
	if !ok || r.Offset != m.Offset || r.DeliveryCount != 2 {
		t.Fatalf("waiting consumer after nack: %+v %v", r, ok)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("woken %v after the nack (wait was 10 s)", d)
	}
}
