package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// startExpectingExit starts n and waits for the process to end by itself
// (a refused start); it returns the node's output.
func startExpectingExit(t *testing.T, n *node) string {
	t.Helper()
	n.startNoWait()
	select {
	case <-n.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("narad kept running; it should have refused to start:\n%s", tail(n.logs.String(), 3000))
	}
	if code := n.cmd.ProcessState.ExitCode(); code == 0 {
		t.Fatalf("narad exited 0; want a refused start:\n%s", tail(n.logs.String(), 3000))
	}
	return n.logs.String()
}

// produceAll produces count keyed records and waits until all of them are
// committed to the topic's partition logs (replayable).
func produceAll(t *testing.T, n *node, topic string, count int) {
	t.Helper()
	ctx := ctxT(t)
	for i := range count {
		key := fmt.Sprintf("k%d", i)
		if err := n.c.Produce(ctx, topic, []byte(fmt.Sprintf(`{"id":%d}`, i)), client.ProduceOptions{Key: &key}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "every record committed", func() bool {
		return len(replayAll(t, n, topic)) == count
	})
}

// replayAll reads every partition of topic from offset 0 by replay.
func replayAll(t *testing.T, n *node, topic string) map[string]bool {
	t.Helper()
	ctx := ctxT(t)
	d, err := n.c.GetTopic(ctx, topic)
	if err != nil {
		return nil
	}
	got := map[string]bool{}
	for p := range d.Partitions {
		var from uint64
		for {
			part, off := p, from
			ms, err := n.c.Consume(ctx, topic, client.ConsumeOptions{Partition: &part, Offset: &off, Max: 100})
			if err != nil || len(ms) == 0 {
				break
			}
			for _, m := range ms {
				got[string(m.Payload)] = true
				from = m.Offset + 1
			}
		}
	}
	return got
}

// A node whose metastore directory is lost must not boot as a new cluster
// and sweep every topic's data away as orphans: it refuses, and the
// operator's adopt brings the topics back from disk.
func TestLostMetastoreRefusedThenAdopted(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "orders", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	produceAll(t, n, "orders", 30)
	n.stop()

	data := filepath.Join(n.dir, "data")
	if err := os.RemoveAll(filepath.Join(data, "metastore")); err != nil {
		t.Fatal(err)
	}
	logs := startExpectingExit(t, n)
	for _, want := range []string{"no metastore state", "orders", "NARAD_RECOVERY_ORPHAN_DATA"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, tail(logs, 2000))
		}
	}
	segs, _ := filepath.Glob(filepath.Join(data, "topics", "orders", "p*", "*.log"))
	if len(segs) == 0 {
		t.Fatal("the topic's segments are gone after the refused start")
	}

	n.env = append(n.env, "NARAD_RECOVERY_ORPHAN_DATA=adopt")
	n.start()
	d, err := n.c.GetTopic(ctx, "orders")
	if err != nil {
		t.Fatalf("adopted topic: %v", err)
	}
	if d.Partitions != 3 {
		t.Fatalf("adopted topic has %d partitions, want 3", d.Partitions)
	}
	got := replayAll(t, n, "orders")
	for i := range 30 {
		if !got[fmt.Sprintf(`{"id":%d}`, i)] {
			t.Errorf("record %d lost in the adoption", i)
		}
	}
}

// A data directory belongs to the node that first used it.
func TestNodeIDChangeRefused(t *testing.T) {
	n := startNode(t)
	n.stop()
	if b, err := os.ReadFile(filepath.Join(n.dir, "data", "node-id")); err != nil || strings.TrimSpace(string(b)) != n.id {
		t.Fatalf("node-id file = %q, %v; want %q", b, err, n.id)
	}
	n.env = append(n.env, "NARAD_NODE_ID=someone-else")
	logs := startExpectingExit(t, n)
	for _, want := range []string{`belongs to node "node-1"`, `configured as "someone-else"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the refusal does not say %s:\n%s", want, tail(logs, 2000))
		}
	}
}
