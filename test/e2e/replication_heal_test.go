package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestReplicatedHealAfterANodeDies: four nodes with heal_after at 2 s, an
// RF=3 topic of one partition under produce. A node holding a copy (the
// partition's leader if it is not the metastore leader, so failover and
// the heal both run) is SIGKILLed and stays down: the controller
// re-creates its copy on the fourth node, the partition ends with three
// copies, all in sync, none on the dead node, the heal is counted once,
// and every record answered 202 is consumable. Restarted, the node is in
// no replica set any more and deletes its old copy.
func TestReplicatedHealAfterANodeDies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 4, "NARAD_REPLICATION_HEAL_AFTER_MS=2000", "NARAD_LOG_LEVEL=info")
	createReplicatedN(t, nodes[0], "hl", 1, 3)
	raftLeader := nodes[leaderIndex(t, nodes)].id
	ps, _ := allPartitionStats(nodes[0], "hl")
	// One partition of three copies on four nodes: after the heal no node
	// holds two copies more than another, so no rebalance brings a copy
	// back to the dead node once it returns.
	i := slices.IndexFunc(ps[0].Replicas, func(id string) bool { return id != raftLeader })
	victim, rest := byID(nodes, ps[0].Replicas[i])
	t.Logf("killing %s (replicas %v, leader %s, metastore leader %s)", victim.id, ps[0].Replicas, ps[0].OwnerNode, raftLeader)

	led := newReplLedger(t, "hl")
	for i := 0; i < 100; i++ {
		led.produce(rest[i%len(rest)])
	}
	stop := make(chan struct{})
	producing := produceUntil(led, rest, stop)

	victim.kill()
	var last []client.PartitionStats
	defer func() {
		if t.Failed() {
			t.Logf("partition as last described: %+v", last)
		}
	}()
	eventually(t, 40*time.Second, "three copies in sync, none on "+victim.id, func() bool {
		ps, ok := allPartitionStats(rest[0], "hl")
		last = ps
		if !ok || len(ps) != 1 {
			return false
		}
		p := ps[0]
		return len(p.Replicas) == 3 && len(p.InSync) == 3 && !slices.Contains(p.Replicas, victim.id) && p.OwnerNode != victim.id
	})
	heals := 0.0
	for _, n := range rest {
		heals += max(0, n.metric("narad_replica_heals_total"))
	}
	if heals != 1 {
		t.Errorf("narad_replica_heals_total summed over the live nodes: %v, want 1", heals)
	}
	stopAndCheck(t, led, stop, producing, 100, rest[0])

	if len(partitionDirs(t, victim, "hl")) == 0 {
		t.Fatalf("%s held no copy on disk before it restarts: the shed below would prove nothing", victim.id)
	}
	victim.restart()
	eventually(t, 30*time.Second, victim.id+"'s old copy deleted from its disk", func() bool {
		return len(partitionDirs(t, victim, "hl")) == 0
	})
	if ps, ok := allPartitionStats(victim, "hl"); !ok || slices.Contains(ps[0].Replicas, victim.id) || len(ps[0].InSync) != 3 {
		t.Fatalf("after %s returned: %+v", victim.id, ps)
	}
}
