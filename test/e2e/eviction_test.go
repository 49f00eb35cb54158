package e2e

import (
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestIdleEvictionAndDescribeWithoutOpening: an untouched log is closed,
// and describing the topic (repeatedly) does not reopen it.
func TestIdleEvictionAndDescribeWithoutOpening(t *testing.T) {
	n := startNode(t, "NARAD_STORAGE_IDLE_LOG_EVICTION_MS=300")
	ctx := ctxT(t)
	n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "idle", Partitions: 2})
	for i := 0; i < 10; i++ {
		if err := n.c.Produce(ctx, "idle", []byte("x"), client.ProduceOptions{Partition: ptr(i % 2)}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "both logs open", func() bool { return n.metric("narad_open_partition_logs") == 2 })
	eventually(t, 10*time.Second, "idle logs evicted", func() bool { return n.metric("narad_open_partition_logs") == 0 })
	if n.metric("narad_idle_logs_evicted_total") < 2 {
		t.Fatalf("evicted counter %v", n.metric("narad_idle_logs_evicted_total"))
	}
	for i := 0; i < 5; i++ {
		d, err := n.c.GetTopic(ctx, "idle")
		if err != nil {
			t.Fatal(err)
		}
		total := uint64(0)
		for _, ps := range d.PartitionStats {
			total += ps.HighWatermark
		}
		if total != 10 {
			t.Fatalf("describe of evicted logs: high watermarks sum to %d, want 10", total)
		}
	}
	// A consume with nothing new (everything below HWM is available, so this
	// one must open) — but first check that describing kept them closed.
	if v := n.metric("narad_open_partition_logs"); v != 0 {
		t.Fatalf("describing reopened logs: narad_open_partition_logs = %v", v)
	}
	// Use reopens invisibly.
	msgs, err := n.c.Consume(ctx, "idle", client.ConsumeOptions{Max: 100, Wait: time.Second})
	if err != nil || len(msgs) != 10 {
		t.Fatalf("consume after eviction: %d %v", len(msgs), err)
	}
}
