package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/client"
)

// TestClusterAnyNodeServesAnyRequest: a topic created through a follower
// spreads over all three nodes; records produced to every node are
// consumed from every node; a replica child's partition p never shares a
// node with parent partition p.
func TestClusterAnyNodeServesAnyRequest(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[1].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "orders", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[2].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "orders-replica", Parent: "orders"}); err != nil {
		t.Fatal(err)
	}
	d, err := nodes[2].c.GetTopic(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]bool{}
	for _, ps := range d.PartitionStats {
		owners[ps.OwnerNode] = true
	}
	if len(owners) != 3 {
		t.Fatalf("partitions owned by %v; want all three nodes", owners)
	}
	rd, _ := nodes[0].c.GetTopic(ctx, "orders-replica")
	for p := range rd.PartitionStats {
		if rd.PartitionStats[p].OwnerNode == d.PartitionStats[p].OwnerNode {
			t.Fatalf("replica partition %d shares node %s with its parent partition", p, d.PartitionStats[p].OwnerNode)
		}
	}
	want := map[string]bool{}
	for i, n := range nodes {
		for j := 0; j < 10; j++ {
			id := fmt.Sprintf("id-%d", i*100+j)
			opts := client.ProduceOptions{}
			if j%2 == 0 {
				opts.Key = ptr(fmt.Sprintf("k%d", j))
			}
			if err := n.c.Produce(ctx, "orders", []byte(id), opts); err != nil {
				t.Fatalf("produce to %s: %v", n.id, err)
			}
			want[id] = true
		}
	}
	got := map[int]int{}
	var mu sync.Mutex
	for round := 0; round < 100 && len(got) < len(want); round++ {
		n := nodes[round%3]
		msgs, err := n.c.Consume(ctx, "orders", client.ConsumeOptions{Max: 7, Wait: 500 * time.Millisecond})
		if err != nil {
			t.Fatalf("consume from %s: %v", n.id, err)
		}
		handles := []string{}
		for _, m := range msgs {
			b, _ := m.Bytes()
			var id int
			fmt.Sscanf(string(b), "id-%d", &id)
			mu.Lock()
			got[id]++
			mu.Unlock()
			handles = append(handles, m.ReceiptHandle)
		}
		if len(handles) > 0 {
			res, err := nodes[(round+1)%3].c.AckBatch(ctx, "orders", handles) // acked through yet another node
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Status != http.StatusNoContent {
					t.Fatalf("ack %s through another node: %d", r.ReceiptHandle, r.Status)
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("consumed %d distinct of %d produced", len(got), len(want))
	}
	// The replica child received everything too.
	eventually(t, 20*time.Second, "replica child caught up", func() bool {
		rd, err := nodes[1].c.GetTopic(ctx, "orders-replica")
		if err != nil {
			return false
		}
		sum := uint64(0)
		for _, ps := range rd.PartitionStats {
			sum += ps.HighWatermark
		}
		return sum == uint64(len(want))
	})
}

// TestClusterLeaderSIGKILL: killing the Raft leader elects a new one within
// seconds; topic creation works again; no accepted record is lost.
func TestClusterLeaderSIGKILL(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "before", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	leader := -1
	for i, n := range nodes {
		if n.metric("narad_raft_is_leader") == 1 {
			leader = i
		}
	}
	eventually(t, 10*time.Second, "a leader shows in metrics", func() bool {
		for i, n := range nodes {
			if n.metric("narad_raft_is_leader") == 1 {
				leader = i
				return true
			}
		}
		return false
	})
	nodes[leader].kill()
	other := nodes[(leader+1)%3]
	t0 := time.Now()
	eventually(t, 30*time.Second, "topic creation after the leader died", func() bool {
		_, err := other.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "after", Partitions: 3})
		return err == nil || client.StatusOf(err) == http.StatusConflict
	})
	t.Logf("topic creation worked again %v after SIGKILL of the leader", time.Since(t0).Round(10*time.Millisecond))
	nodes[leader].restart()
}
