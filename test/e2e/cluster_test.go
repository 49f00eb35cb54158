package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
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
	// Each record's message id as produce answered it: the node that took
	// it names it by its own WAL, and the owner — often another node,
	// reached by node RPC — keeps that name (docs/concepts.md, "Message
	// ids").
	answered := map[string]string{}
	ids := map[string]bool{}
	for i, n := range nodes {
		for j := 0; j < 10; j++ {
			id := fmt.Sprintf("id-%d", i*100+j)
			opts := client.ProduceOptions{}
			if j%2 == 0 {
				opts.Key = ptr(fmt.Sprintf("k%d", j))
			}
			acc, err := n.c.ProduceWithID(ctx, "orders", []byte(id), opts)
			if err != nil {
				t.Fatalf("produce to %s: %v", n.id, err)
			}
			if acc.ID == "" || ids[acc.ID] {
				t.Fatalf("produce to %s answered id %q (taken: %v)", n.id, acc.ID, ids[acc.ID])
			}
			want[id], answered[id], ids[acc.ID] = true, acc.ID, true
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
			if m.ID != answered[string(b)] {
				t.Fatalf("consumed %s with id %q through %s; produce answered %q", b, m.ID, n.id, answered[string(b)])
			}
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
	// Every copy in the child names its source by the id produce
	// answered, and has an id of its own.
	for p := range rd.PartitionStats {
		msgs, err := nodes[p%3].c.Consume(ctx, "orders-replica", client.ConsumeOptions{Partition: ptr(p), Offset: ptr(uint64(0)), Max: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			b, _ := m.Bytes()
			if src := m.Headers["narad-source-id"]; src != answered[string(b)] || m.ID == "" || m.ID == src {
				t.Fatalf("child copy of %s: id %q, narad-source-id %q; the source's id is %q", b, m.ID, src, answered[string(b)])
			}
		}
	}
}

// TestClusterLeaderSIGKILL: killing the Raft leader elects a new one within
// seconds; topic creation works again; no accepted record is lost.
func TestClusterLeaderSIGKILL(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "before", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	leader := leaderIndex(t, nodes)
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

// TestClusterOwnerSIGKILLUnderLoad: with a partition owner killed, produce
// keeps answering 202 (records go to live siblings), consumes pinned to the
// dead owner's partitions answer 503, and after its restart every record
// answered 202 is delivered.
func TestClusterOwnerSIGKILLUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "load", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	var d client.TopicDetail
	eventually(t, 10*time.Second, "the topic applied on n1", func() bool {
		var err error
		d, err = nodes[0].c.GetTopic(ctx, "load")
		return err == nil && len(d.PartitionStats) == 6
	})
	victim := nodes[2]
	var victimPart = -1
	for _, ps := range d.PartitionStats {
		if ps.OwnerNode == victim.id {
			victimPart = ps.Index
		}
	}
	if victimPart < 0 {
		t.Fatalf("%s owns no partition: %+v", victim.id, d.PartitionStats)
	}
	var (
		mu       sync.Mutex
		accepted = map[int]bool{}
		next     = 0
	)
	produce := func(n *node, count int) {
		for i := 0; i < count; i++ {
			mu.Lock()
			next++
			id := next
			mu.Unlock()
			if err := n.c.Produce(ctx, "load", []byte(fmt.Sprintf("id-%d", id)), client.ProduceOptions{}); err != nil {
				t.Errorf("produce to %s while a node is down: %v", n.id, err)
				return
			}
			mu.Lock()
			accepted[id] = true
			mu.Unlock()
		}
	}
	produce(nodes[0], 60)
	victim.kill()
	produce(nodes[0], 120) // keyless rotation hits the dead owner's partition too
	produce(nodes[1], 120)
	_, err := nodes[0].c.Consume(ctx, "load", client.ConsumeOptions{Partition: ptr(victimPart)})
	if client.StatusOf(err) != http.StatusServiceUnavailable {
		t.Fatalf("consume pinned to the dead owner's partition: %v, want 503", err)
	}
	eventually(t, 30*time.Second, "rerouted records committed", func() bool {
		return nodes[0].metric("narad_dispatch_rerouted_total") > 0 || nodes[1].metric("narad_dispatch_rerouted_total") > 0
	})
	victim.restart()
	got := map[int]int{}
	empties := 0
	for empties < 4 {
		msgs, err := nodes[1].c.Consume(ctx, "load", client.ConsumeOptions{Max: 200, Wait: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			empties++
			continue
		}
		empties = 0
		hs := []string{}
		for _, m := range msgs {
			b, _ := m.Bytes()
			var id int
			fmt.Sscanf(string(b), "id-%d", &id)
			got[id]++
			hs = append(hs, m.ReceiptHandle)
		}
		nodes[1].c.AckBatch(ctx, "load", hs)
	}
	checkLedger(t, "load", accepted, got)
}

// TestClusterJoinAndSecret: a fourth node, not among the initial members,
// joins through its peers and becomes ready; a node with the wrong cluster
// secret is refused by node RPC and never admitted.
func TestClusterJoinAndSecret(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	n4 := joinNode(t, nodes, "n4", testSecret)
	n4.waitReady()
	ctx := ctxT(t)
	if _, err := n4.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "via-n4", Partitions: 8}); err != nil {
		t.Fatalf("create through the joined node: %v", err)
	}
	eventually(t, 10*time.Second, "n4 placed in new topics", func() bool {
		d, err := n4.c.GetTopic(ctx, "via-n4")
		if err != nil {
			return false
		}
		for _, ps := range d.PartitionStats {
			if ps.OwnerNode == "n4" {
				return true
			}
		}
		return false
	})
	bad := joinNode(t, nodes, "n5", "not-the-secret")
	time.Sleep(3 * time.Second) // two join rounds: a refused node must still be out
	if err := bad.c.Readyz(ctx); err == nil {
		t.Fatal("a node with the wrong cluster secret became ready")
	}
	status, body, _ := nodes[0].do("GET", "/readyz", "", nil)
	if status != 200 {
		t.Fatalf("the cluster itself stays ready: %d %s", status, body)
	}
}

// TestClusterFanoutChildOwnerSIGKILL: the owner of child partitions is
// killed while the parent is produced to and fanned out across nodes; after
// its return the child holds every accepted parent record (no gaps).
func TestClusterFanoutChildOwnerSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "fsrc", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "fcopy", Parent: "fsrc"}); err != nil {
		t.Fatal(err)
	}
	var d client.TopicDetail
	eventually(t, 10*time.Second, "the child applied on n1", func() bool {
		var err error
		d, err = nodes[0].c.GetTopic(ctx, "fcopy")
		return err == nil && len(d.PartitionStats) == 6
	})
	victim := -1
	for i, n := range nodes[1:] {
		for _, ps := range d.PartitionStats {
			if ps.OwnerNode == n.id {
				victim = i + 1
			}
		}
	}
	if victim < 0 {
		t.Fatal("no child partition on n2 or n3")
	}
	accepted := map[int]bool{}
	id := 0
	produce := func(count int) {
		for i := 0; i < count; i++ {
			id++
			if err := nodes[0].c.Produce(ctx, "fsrc", []byte(fmt.Sprintf("id-%d", id)), client.ProduceOptions{Key: ptr(fmt.Sprintf("k%d", id))}); err != nil {
				t.Fatalf("produce: %v", err)
			}
			accepted[id] = true
		}
	}
	produce(50)
	nodes[victim].kill()
	produce(150)
	nodes[victim].restart()
	produce(50)
	// Every parent record reaches the child: consume it from any node.
	got := drain(t, nodes[0], "fcopy", 6)
	checkLedger(t, "fcopy", accepted, got)
}

// TestClusterUnpinnedConsumeWokenByRemoteCommit: an unpinned consume
// parked on a node that owns none of the topic's partitions is woken by a
// commit on the owner (node RPC Wait), not by its own timer: it returns
// the record, and the wake-up is counted.
func TestClusterUnpinnedConsumeWokenByRemoteCommit(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "far", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	d, err := nodes[0].c.GetTopic(ctx, "far")
	if err != nil {
		t.Fatal(err)
	}
	var owner, waiter *node
	for _, n := range nodes {
		if n.id == d.PartitionStats[0].OwnerNode {
			owner = n
		} else if waiter == nil {
			waiter = n
		}
	}
	if owner == nil {
		t.Fatalf("owner %q is none of the nodes", d.PartitionStats[0].OwnerNode)
	}
	eventually(t, 10*time.Second, waiter.id+" learns the topic", func() bool {
		_, err := waiter.c.GetTopic(ctx, "far")
		return err == nil
	})
	got := make(chan []client.Message, 1)
	go func() {
		msgs, err := waiter.c.Consume(ctx, "far", client.ConsumeOptions{Wait: 10 * time.Second})
		if err != nil {
			t.Error(err)
		}
		got <- msgs
	}()
	eventually(t, 10*time.Second, "the consume parked on "+waiter.id, func() bool {
		return waiter.metric("narad_consume_parked") == 1
	})
	if err := owner.c.Produce(ctx, "far", []byte("id-1"), client.ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	msgs := <-got
	if len(msgs) != 1 {
		t.Fatalf("the parked consume returned %d messages, want the one produced", len(msgs))
	}
	if b, _ := msgs[0].Bytes(); string(b) != "id-1" {
		t.Fatalf("payload %q", b)
	}
	if w := waiter.metric("narad_consume_remote_wakes_total"); w < 1 {
		t.Fatalf("narad_consume_remote_wakes_total = %v: the consume was not woken by the owner's commit", w)
	}
}
