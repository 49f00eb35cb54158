package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestNetworkLeaderCutFromItsFollowers: four nodes at lan; of an RF=3
// topic's partitions the test takes one whose copies are not on the
// metastore leader, and cuts that partition's leader off from both its
// followers (packets dropped both ways) while every node still reaches
// the metastore leader. The leader keeps heartbeating, so only its
// followers' reports can show it cut off: within 30 s one of them must
// lead, produces through the metastore leader (which reaches everyone)
// must be answered 202 again, and the controller must have counted the
// election as one for a cut-off leader. Once the cut heals, every record
// answered 202 is consumable.
func TestNetworkLeaderCutFromItsFollowers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster under faults")
	}
	fc := startFaultCluster(t, 4, "lan")
	nodes := fc.nodes
	meta := leaderIndex(t, nodes)
	createReplicatedN(t, nodes[meta], "cut", 4, 3)
	// Round-robin placement leaves some partition off every node.
	stats, _ := allPartitionStats(nodes[meta], "cut")
	part := slices.IndexFunc(stats, func(p client.PartitionStats) bool { return !slices.Contains(p.Replicas, nodes[meta].id) })
	if part < 0 {
		t.Fatalf("every partition has a copy on the metastore leader %s: %+v", nodes[meta].id, stats)
	}
	leader := stats[part].OwnerNode
	var followers []string
	for _, id := range stats[part].Replicas {
		if id != leader {
			followers = append(followers, id)
		}
	}
	index := func(id string) int { return slices.IndexFunc(nodes, func(n *node) bool { return n.id == id }) }
	t.Logf("partition %d: leader %s, followers %v; %s leads the metastore", part, leader, followers, nodes[meta].id)

	led := newReplLedger(t, "cut")
	led.into = &part
	via := nodes[meta]
	for i := 0; i < 20; i++ {
		if !led.produce(via) {
			t.Fatalf("produce before the cut refused: %v", led.refused)
		}
	}
	cutOff := func(a, b int) bool {
		return (a == index(leader) && slices.Contains(followers, nodes[b].id)) || (b == index(leader) && slices.Contains(followers, nodes[a].id))
	}
	start := time.Now()
	fc.set(func(from, to int) linkRule { return linkRule{Cut: cutOff(from, to)} })
	tried := 0
	eventually(t, 30*time.Second, "a follower to lead partition and answer a produce", func() bool {
		tried++
		ok := led.produce(via)
		p, found := allPartitionStats(via, "cut")
		return ok && found && slices.Contains(followers, p[part].OwnerNode)
	})
	took := time.Since(start)
	now, _ := allPartitionStats(via, "cut")
	t.Logf("%s cut off from %v; %s leads %v later, after %d produces (refused %v)", leader, followers, now[part].OwnerNode,
		took.Round(100*time.Millisecond), tried, led.refused)
	ok := 0
	for i := 0; i < 20; i++ {
		if led.produce(via) {
			ok++
		}
	}
	if ok < 19 {
		t.Errorf("%d of 20 produces after the hand-off answered 202 (refused %v)", ok, led.refused)
	}
	elections := 0.0
	for _, n := range nodes {
		elections += n.metric("narad_replica_cut_off_elections_total")
	}
	if elections < 1 {
		t.Errorf("narad_replica_cut_off_elections_total sums to %v over the nodes; want the hand-off counted", elections)
	}

	fc.set(everyLink(linkRule{}))
	eventually(t, 30*time.Second, "every copy of the partition in sync again after the cut healed", func() bool {
		p, found := allPartitionStats(via, "cut")
		return found && len(p[part].InSync) == 3
	})
	checkLedger(t, led.topic, led.snapshot(), drain(t, via, led.topic, 4))
}
