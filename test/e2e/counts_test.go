package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/storage"
)

// nackOnce leases topic's next record and nacks it, returning the
// delivery_count it was delivered with.
func nackOnce(t *testing.T, n *node, topic string) int {
	t.Helper()
	m := oneMessage(t, n, topic, 5*time.Second)
	if err := n.c.Nack(ctxT(t), topic, m.ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	return m.DeliveryCount
}

// TestDeliveryCountSurvivesRestartAndSIGKILL (docs/concepts.md, "Dead
// letters"): a record delivered three times is delivered a fourth time after
// a clean stop and says 4 (it said 1 before); after a SIGKILL it says at
// least the last persisted count plus one.
func TestDeliveryCountSurvivesRestartAndSIGKILL(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "poison", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := n.c.Produce(ctx, "poison", []byte("boom"), client.ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 3; want++ {
		if got := nackOnce(t, n, "poison"); got != want {
			t.Fatalf("delivery %d says %d", want, got)
		}
	}
	n.stop()
	n.start()
	if got := nackOnce(t, n, "poison"); got != 4 {
		t.Fatalf("first delivery after a clean restart says %d, want 4", got)
	}
	nackOnce(t, n, "poison") // 5
	// Wait until the sweep has written 5, then kill: nothing runs at exit.
	path := filepath.Join(n.dir, "data", "topics", "poison", "p00000", storage.DeliveryCountsFile)
	persisted := func() uint64 {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		es, err := storage.DecodeDeliveryCounts(b)
		if err != nil || len(es) != 1 {
			return 0
		}
		return es[0].Count
	}
	eventually(t, 20*time.Second, "count 5 persisted", func() bool { return persisted() == 5 })
	n.kill()
	n.start()
	if got := nackOnce(t, n, "poison"); got < 6 {
		t.Fatalf("first delivery after a SIGKILL says %d, want at least 6 (5 was persisted)", got)
	}
}

// TestPurgeThroughAPIAndCLI (docs/concepts.md, "Redrive and purge"): a purge
// settles everything below the high watermarks, its leases' acks answer
// 410, replay still reads every record, it survives a SIGKILL, a second
// purge answers 0, and the CLI refuses without --yes off a terminal.
func TestPurgeThroughAPIAndCLI(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "pq", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := n.c.Produce(ctx, "pq", []byte{byte('a' + i)}, client.ProduceOptions{Partition: ptr(i % 2)}); err != nil {
			t.Fatal(err)
		}
	}
	// A 202 means durable in the ingress WAL; purge settles what is below
	// the high watermarks, so wait for all ten to be committed first.
	eventually(t, 10*time.Second, "all ten records committed", func() bool {
		d, err := n.c.GetTopic(ctx, "pq")
		if err != nil {
			return false
		}
		var sum uint64
		for _, p := range d.PartitionStats {
			sum += p.HighWatermark
		}
		return sum == 10
	})
	leased := oneMessage(t, n, "pq", 5*time.Second)
	got, err := n.c.Purge(ctx, "pq")
	if err != nil || got != 10 {
		t.Fatalf("purge: %d %v, want 10", got, err)
	}
	if err := n.c.Ack(ctx, "pq", leased.ReceiptHandle); client.StatusOf(err) != http.StatusGone {
		t.Fatalf("ack of a purged lease: %v, want 410", err)
	}
	if msgs, err := n.c.Consume(ctx, "pq", client.ConsumeOptions{}); err != nil || len(msgs) != 0 {
		t.Fatalf("purged records delivered: %v %v", msgs, err)
	}
	n.kill()
	n.start()
	if msgs, err := n.c.Consume(ctx, "pq", client.ConsumeOptions{Wait: 300 * time.Millisecond}); err != nil || len(msgs) != 0 {
		t.Fatalf("purged records back after a SIGKILL: %v %v", msgs, err)
	}
	msgs, err := n.c.Consume(ctx, "pq", client.ConsumeOptions{Partition: ptr(0), Offset: ptr(uint64(0)), Max: 100})
	if err != nil || len(msgs) != 5 {
		t.Fatalf("replay after the purge: %d records %v, want 5", len(msgs), err)
	}
	if got, err := n.c.Purge(ctx, "pq"); err != nil || got != 0 {
		t.Fatalf("second purge: %d %v, want 0", got, err)
	}
	if v := n.metric(`narad_purged_messages_total{topic="pq"}`); v != 0 && v != -1 {
		t.Fatalf("purged_messages_total after a restart and an empty purge: %v", v)
	}
	n.c.Produce(ctx, "pq", []byte("late"), client.ProduceOptions{})
	if r := runCLI(t, n.http, "topic", "purge", "pq"); r.code == 0 || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("purge without --yes off a terminal: %+v", r)
	}
	if r := runCLI(t, n.http, "topic", "purge", "pq", "--yes"); r.code != 0 || r.stdout != "purged 1 record from topic pq\n" {
		t.Fatalf("narad topic purge --yes: %+v", r)
	}
}

// TestClusterPurgeReachesEveryOwner: through any node, a purge settles the
// partitions every owner holds, and counts them all.
func TestClusterPurgeReachesEveryOwner(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "cp", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := nodes[i%3].c.Produce(ctx, "cp", []byte("x"), client.ProduceOptions{Partition: ptr(i % 6)}); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until every record is committed (below a high watermark).
	eventually(t, 10*time.Second, "30 records committed", func() bool {
		d, err := nodes[1].c.GetTopic(ctx, "cp")
		if err != nil {
			return false
		}
		var sum uint64
		for _, ps := range d.PartitionStats {
			sum += ps.HighWatermark
		}
		return sum == 30
	})
	got, err := nodes[1].c.Purge(ctx, "cp")
	if err != nil || got != 30 {
		t.Fatalf("cluster purge: %d %v, want 30", got, err)
	}
	for _, n := range nodes {
		if msgs, err := n.c.Consume(ctx, "cp", client.ConsumeOptions{}); err != nil || len(msgs) != 0 {
			t.Fatalf("purged records delivered by %s: %v %v", n.id, msgs, err)
		}
	}
	if got, err := nodes[2].c.Purge(ctx, "cp"); err != nil || got != 0 {
		t.Fatalf("second cluster purge: %d %v", got, err)
	}
}
