package broker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// Issue 9 §4 "frontier above the high watermark": clamped to the high
// watermark the log recovered to, logged and counted, and records
// committed after it are consumable (today they hide below the frontier).
func TestFrontierAboveHWMIsClamped(t *testing.T) {
	n := newTestNode(t, Config{})
	n.createTopic("orders", 1)
	if err := n.commit("orders", 0, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	n.b.Close()
	if err := storage.WriteOffsetFile(filepath.Join(n.partDir("orders", 0), storage.ConsumerOffsetFile), 100); err != nil {
		t.Fatal(err)
	}
	n.start()
	if err := n.commit("orders", 0, "new"); err != nil { // opens the log before the queue loads
		t.Fatal(err)
	}
	msgs, err := n.consume("orders", 0, 10)
	if err != nil || len(msgs) != 1 || string(msgs[0].Payload) != "new" || msgs[0].Offset != 3 {
		t.Fatalf("consume after the clamp: %v %v; want the new record at offset 3", payloadsOf(msgs), err)
	}
	if v := n.metric(`narad_errors_total{component="broker",kind="frontier_above_hwm"}`); v != 1 {
		t.Fatalf("errors_total{broker,frontier_above_hwm} = %v", v)
	}
	if !strings.Contains(n.logs.String(), "frontier=100") {
		t.Fatalf("the clamp is not logged:\n%s", n.logs)
	}
	v, _ := n.b.DescribeTopic("orders")
	if ps := v.PartitionStats[0]; ps.ConsumerFrontier == nil || *ps.ConsumerFrontier > *ps.HighWatermark {
		t.Fatalf("describe: frontier %v above hwm %v", ps.ConsumerFrontier, ps.HighWatermark)
	}
}

// The hwm file is written before any frontier it would be behind, so after
// a crash a frontier above the recorded high watermark is never just a
// stale hwm file (which is what lets recovery trust the hwm file and the
// broker clamp the frontier).
func TestHWMFileNeverBehindPersistedFrontier(t *testing.T) {
	n := newTestNode(t, Config{HWMPersistPeriod: time.Hour, FrontierPersist: time.Hour})
	n.createTopic("orders", 1)
	if err := n.commit("orders", 0, "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	msgs, err := n.consume("orders", 0, 10)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("consume: %v %v", payloadsOf(msgs), err)
	}
	for _, m := range msgs {
		if err := n.b.Ack(context.Background(), "orders", m.ReceiptHandle, Settle); err != nil {
			t.Fatal(err)
		}
	}
	n.b.upkeep.persistFrontiers()
	dir := n.partDir("orders", 0)
	f, _, err := storage.ReadOffsetFile(filepath.Join(dir, storage.ConsumerOffsetFile))
	if err != nil || f != 3 {
		t.Fatalf("frontier file: %d %v", f, err)
	}
	if h, err := storage.ReadHWMFile(dir); err != nil || h.HWM < f {
		t.Fatalf("hwm file says %d (%v), behind the persisted frontier %d", h.HWM, err, f)
	}
}
