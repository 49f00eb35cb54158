package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

func ptr[T any](v T) *T { return &v }

// TestProduceConsumeAck is the thin path: create, produce (single and
// batch), consume with leases, ack, replay, describe.
func TestProduceConsumeAck(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "orders", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	if err := n.c.Produce(ctx, "orders", []byte(`{"id":1}`), client.ProduceOptions{Key: ptr("c1")}); err != nil {
		t.Fatal(err)
	}
	if err := n.c.Produce(ctx, "orders", []byte("plain text"), client.ProduceOptions{Partition: ptr(1)}); err != nil {
		t.Fatal(err)
	}
	if err := n.c.Produce(ctx, "orders", []byte{0xff, 0x00, 0x01}, client.ProduceOptions{Partition: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	acc, err := n.c.ProduceBatch(ctx, "orders", []client.BatchRecord{
		{Key: ptr("c2"), Payload: json.RawMessage(`{"id":2}`)},
		{Partition: ptr(0), Payload: json.RawMessage(`"batch text"`)},
		{PayloadBase64: "AQL/"},
	})
	if err != nil || acc != 3 {
		t.Fatalf("batch: %d %v", acc, err)
	}
	seen := map[string]client.Message{}
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < 6 && time.Now().Before(deadline) {
		msgs, err := n.c.Consume(ctx, "orders", client.ConsumeOptions{Wait: time.Second, Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			b, err := m.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			seen[string(b)] = m
			if err := n.c.Ack(ctx, "orders", m.ReceiptHandle); err != nil {
				t.Fatalf("ack %s: %v", m.ReceiptHandle, err)
			}
		}
	}
	for _, want := range []string{`{"id":1}`, "plain text", "\xff\x00\x01", `{"id":2}`, "batch text", "\x01\x02\xff"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("payload %q never consumed (got %d)", want, len(seen))
		}
	}
	if m := seen[`{"id":1}`]; m.Key == nil || *m.Key != "c1" || m.DeliveryCount != 1 {
		t.Errorf("keyed record: key %v, delivery_count %d", m.Key, m.DeliveryCount)
	}
	if m := seen["\xff\x00\x01"]; m.PayloadEncoding != "base64" || m.Partition != 2 {
		t.Errorf("binary payload came back with encoding %q on partition %d", m.PayloadEncoding, m.Partition)
	}
	// All acked: nothing left, and the frontier shows it.
	msgs, err := n.c.Consume(ctx, "orders", client.ConsumeOptions{})
	if err != nil || len(msgs) != 0 {
		t.Fatalf("after acking everything: %d messages, %v", len(msgs), err)
	}
	// Replay still reads by position, without leases.
	rep, err := n.c.Consume(ctx, "orders", client.ConsumeOptions{Partition: ptr(1), Offset: ptr(uint64(0))})
	if err != nil || len(rep) != 1 || rep[0].ReceiptHandle != "" {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	eventually(t, 20*time.Second, "frontiers persisted and described", func() bool {
		d, err := n.c.GetTopic(ctx, "orders")
		if err != nil {
			t.Fatal(err)
		}
		total := uint64(0)
		for _, ps := range d.PartitionStats {
			if ps.ConsumerFrontier != ps.HighWatermark {
				return false
			}
			total += ps.HighWatermark
		}
		return total == 6
	})
}

// TestLongPollWakesOnCommit: a waiting consume returns as soon as a record
// commits, well before its wait runs out.
func TestLongPollWakesOnCommit(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "lp", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		msgs    []client.Message
		err     error
		elapsed time.Duration
	}
	var worst time.Duration
	for i := 0; i < 5; i++ {
		done := make(chan result, 1)
		started := make(chan struct{})
		go func() {
			close(started)
			t0 := time.Now()
			msgs, err := n.c.Consume(ctx, "lp", client.ConsumeOptions{Wait: 10 * time.Second})
			done <- result{msgs, err, time.Since(t0)}
		}()
		<-started
		time.Sleep(100 * time.Millisecond) // let the consume park (not a correctness wait: the result is checked below)
		t0 := time.Now()
		if err := n.c.Produce(ctx, "lp", []byte(fmt.Sprintf("m%d", i)), client.ProduceOptions{}); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || len(r.msgs) != 1 {
			t.Fatalf("long poll: %+v", r)
		}
		if err := n.c.Ack(ctx, "lp", r.msgs[0].ReceiptHandle); err != nil {
			t.Fatal(err)
		}
		worst = max(worst, time.Since(t0))
	}
	t.Logf("worst produce→delivered to a parked consumer: %v (wait was 10s)", worst)
	if worst >= 5*time.Second {
		t.Fatalf("long-poll returned only after %v of a 10s wait: not woken by the commit", worst)
	}
}

// TestEmptyConsumeAnswers204AfterWait: nothing to deliver → 204 once the
// wait (capped) runs out.
func TestEmptyConsumeAnswers204AfterWait(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "empty"})
	status, body, _ := n.do("GET", "/v1/topics/empty/consume?wait=200ms", "", nil)
	if status != 204 || len(strings.TrimSpace(string(body))) != 0 {
		t.Fatalf("empty consume: %d %q", status, body)
	}
}
