package broker

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// A purge settles every record below each partition's high watermark:
// leases on them end (410), their counts go, records committed after it
// are delivered, replay still reads everything, and it is durable at once
// and idempotent.
func TestPurgeSettlesBelowTheHighWatermark(t *testing.T) {
	n := newTestNode(t, Config{FrontierPersist: time.Hour})
	n.createTopic("jobs", 2)
	for p := range 2 {
		if err := n.commit("jobs", p, "a", "b", "c"); err != nil {
			t.Fatal(err)
		}
	}
	leased, err := n.consume("jobs", 0, 2) // 0 and 1 leased
	if err != nil || len(leased) != 2 {
		t.Fatalf("consume: %v %v", payloadsOf(leased), err)
	}
	if err := n.b.Ack(context.Background(), "jobs", leased[1].ReceiptHandle, Settle); err != nil {
		t.Fatal(err)
	}
	// Partition 0: 0 leased, 1 acked ahead, 2 never delivered → 2 settled
	// by the purge; partition 1: 3.
	got, err := n.b.Purge(context.Background(), "jobs", nil)
	if err != nil || got != 5 {
		t.Fatalf("Purge = %d %v, want 5", got, err)
	}
	// The 410 says the lease ended and why in words true of a purge (the
	// record was never acked).
	for _, op := range []AckOp{Settle, Extend, Nack} {
		err := n.b.Ack(context.Background(), "jobs", leased[0].ReceiptHandle, op)
		if ae, ok := apierr.From(err); !ok || ae.Status != http.StatusGone || strings.Contains(ae.Message, "(acked)") ||
			!strings.Contains(ae.Message, "the lease on the record at offset 0 of partition 0 has ended") || !strings.Contains(ae.Message, "purged") {
			t.Fatalf("%s of a purged lease: %v, want 410 saying the lease ended, the record purged or settled", opVerb(op), err)
		}
	}
	if msgs, err := n.consume("jobs", -1, 10); err != nil || len(msgs) != 0 {
		t.Fatalf("purged records delivered: %v %v", payloadsOf(msgs), err)
	}
	if n.b.parts.PeekQueue("jobs", 0).Table.DeliveryCount(0) != 0 {
		t.Fatal("a purged record keeps its delivery count")
	}
	if got, err := n.b.Purge(context.Background(), "jobs", nil); err != nil || got != 0 {
		t.Fatalf("second Purge = %d %v, want 0", got, err)
	}
	if v := n.metric(`narad_purged_messages_total{topic="jobs"}`); v != 5 {
		t.Fatalf("purged_messages_total = %v, want 5", v)
	}
	// Durable without the sweep (FrontierPersist is an hour).
	if f, _, err := storage.ReadOffsetFile(filepath.Join(n.partDir("jobs", 1), storage.ConsumerOffsetFile)); err != nil || f != 3 {
		t.Fatalf("frontier file %d %v, want 3 at once", f, err)
	}
	if msgs, err := n.replay("jobs", 0, 0, 10); err != nil || len(msgs) != 3 {
		t.Fatalf("replay after the purge: %v %v, want all three", payloadsOf(msgs), err)
	}
	if err := n.commit("jobs", 0, "d"); err != nil {
		t.Fatal(err)
	}
	n.restart(nil)
	msgs, err := n.consume("jobs", 0, 10)
	if err != nil || len(msgs) != 1 || string(msgs[0].Payload) != "d" {
		t.Fatalf("after the purge and a restart: %v %v, want only d", payloadsOf(msgs), err)
	}
}

func TestPurgeRefusals(t *testing.T) {
	adm := &admission{}
	n := newTestNode(t, Config{Admission: adm})
	n.createTopic("jobs", 2)
	ctx := context.Background()
	if _, err := n.b.Purge(ctx, "nope", nil); !errors.Is(err, refusal.ErrTopicNotFound) {
		t.Fatalf("unknown topic: %v", err)
	}
	if _, err := n.b.Purge(ctx, "jobs", []int{2}); !errors.Is(err, refusal.ErrPartitionRange) {
		t.Fatalf("partition out of range: %v", err)
	}
	if err := n.commit("jobs", 0, "a"); err != nil {
		t.Fatal(err)
	}
	adm.mu.Lock()
	adm.closed = true // a move froze the partition
	adm.mu.Unlock()
	if _, err := n.b.Purge(ctx, "jobs", []int{0}); !errors.Is(err, refusal.ErrFrozen) {
		t.Fatalf("frozen partition: %v, want ErrFrozen", err)
	}
	adm.mu.Lock()
	adm.closed = false
	adm.mu.Unlock()
	// A frontier that cannot be written: 503, and the retry writes it.
	fault := n.fs.Inject(errorfs.Rule{Ops: errorfs.OpRename, Path: storage.ConsumerOffsetFile, Err: syscall.EIO})
	_, err := n.b.Purge(ctx, "jobs", []int{0})
	if ae, ok := apierr.From(err); !ok || ae.Status != http.StatusServiceUnavailable {
		t.Fatalf("frontier write failing: %v, want 503", err)
	}
	fault.Remove()
	if got, err := n.b.Purge(ctx, "jobs", []int{0}); err != nil || got != 0 {
		t.Fatalf("retry: %d %v", got, err)
	}
	if f, _, err := storage.ReadOffsetFileFS(vfs.Default, filepath.Join(n.partDir("jobs", 0), storage.ConsumerOffsetFile)); err != nil || f != 1 {
		t.Fatalf("frontier after the retry: %d %v", f, err)
	}
}
