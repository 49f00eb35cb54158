package e2e

import (
	"os"
	"testing"
	"time"
)

// slowLink is the network: 50–200 ms one way and 5% loss.
var slowLink = linkRule{DelayMinMS: 50, DelayMaxMS: 200, Loss: 0.05}

// TestNetworkWANSteadyUnderDelayAndLoss: three nodes on cluster.network
// wan, every link delayed 50–200 ms each way with 5% loss (netfault's
// model: a lost write waits a retransmission timeout) for 20 s, while a
// producer sends steadily through every node to a single-copy and a
// three-copy topic. No metastore election may happen during the fault
// (no node's Raft term moves), at least 95% of the produces sent after the
// fault's first 3 s are answered 202, and every record answered 202 is
// consumable afterwards.
//
// NARAD_E2E_NETWORK=lan runs the same at lan, which fails: that is how the
// figures docs/cluster.md gives for lan were measured.
func TestNetworkWANSteadyUnderDelayAndLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster under faults for 20 s")
	}
	network := "wan"
	if v := os.Getenv("NARAD_E2E_NETWORK"); v != "" {
		network = v
	}
	fc := startFaultCluster(t, 3, network)
	nodes := fc.nodes
	createReplicatedN(t, nodes[0], "single", 3, 1)
	createReplicatedN(t, nodes[0], "triple", 3, 3)
	single := startProducer(t, "single", 100*time.Millisecond, nodes)
	triple := startProducer(t, "triple", 100*time.Millisecond, nodes)

	before := raftTerms(nodes)
	start := time.Now()
	fc.set(everyLink(slowLink))
	// Count leaders as the nodes report them while the fault lasts; a
	// change of the term is the stricter sign, checked after.
	leaders := map[int]bool{}
	for time.Since(start) < 20*time.Second {
		for i, n := range nodes {
			if n.metric("narad_raft_is_leader") == 1 {
				leaders[i] = true
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	after := raftTerms(nodes)
	end := time.Now()
	fc.set(everyLink(linkRule{}))
	single.finish()
	triple.finish()

	t.Logf("cluster.network=%s, 20 s at %+v on every link: Raft terms %v -> %v, leaders seen %d",
		network, slowLink, before, after, len(leaders))
	for i := range nodes {
		if after[i] != before[i] {
			t.Errorf("%s's Raft term moved from %v to %v during the fault: the metastore held an election", nodes[i].id, before[i], after[i])
		}
	}
	if len(leaders) != 1 {
		t.Errorf("%d nodes led the metastore during the fault; want one throughout", len(leaders))
	}
	for _, p := range []*steadyProducer{single, triple} {
		p.requireAnswered(start.Add(3*time.Second), end, 100, "after the fault's first 3 s")
	}
	single.checkConsumable(nodes[1])
	triple.checkConsumable(nodes[2])
}

// TestNetworkLANFailoverWhenTheMetastoreLeaderIsCut: on cluster.network
// lan, the metastore leader is cut off from both other nodes (its packets
// dropped both ways, as a failed link drops them) for 12 s while a
// producer sends steadily through the other two to a single-copy and a
// three-copy topic. The two elect a metastore leader of their own, and at
// least 95% of the produces sent 5 s or more after the cut are answered
// 202 (the bound on failover at lan); once the link is back every
// record answered 202 is consumable.
//
// The bound is a count over 7 s of produces, not a stopwatch. What must
// happen within the first 5 s: the two elect a leader (Raft's heartbeat
// timeout, 0.5–1 s with jitter, and a vote round), a node fenced meanwhile
// renews its lease with its next heartbeat (every 500 ms), and a
// partition the cut node led fails over 2.5 s after the election — about
// 4 s at worst, 2 s in practice since produces without a partition go
// to partitions that answer. The 5% allowed lets three of the window's
// seventy produces fail, so a recovery half a second past 5 s on a loaded
// machine still passes, while wan's timings (election 2–4 s, lease 5 s,
// failover 7.5 s) fail it: 52 of 72 answered when tried.
func TestNetworkLANFailoverWhenTheMetastoreLeaderIsCut(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster under faults")
	}
	fc := startFaultCluster(t, 3, "lan")
	nodes := fc.nodes
	createReplicatedN(t, nodes[0], "single", 3, 1)
	createReplicatedN(t, nodes[0], "triple", 3, 3)
	cut := leaderIndex(t, nodes)
	var majority []*node
	for i, n := range nodes {
		if i != cut {
			majority = append(majority, n)
		}
	}
	single := startProducer(t, "single", 100*time.Millisecond, majority)
	triple := startProducer(t, "triple", 100*time.Millisecond, majority)
	time.Sleep(time.Second) // a second of produces before the cut, to compare

	before := raftTerms(nodes)
	start := time.Now()
	fc.set(func(from, to int) linkRule { return linkRule{Cut: from == cut || to == cut} })
	newLeader := -1
	eventually(t, 10*time.Second, "the majority to elect a metastore leader", func() bool {
		for i, n := range nodes {
			if i != cut && n.metric("narad_raft_is_leader") == 1 {
				newLeader = i
				return true
			}
		}
		return false
	})
	elected := time.Since(start)
	for time.Since(start) < 12*time.Second {
		time.Sleep(250 * time.Millisecond)
	}
	end := time.Now()
	fc.set(everyLink(linkRule{}))
	single.finish()
	triple.finish()
	t.Logf("%s (metastore leader, term %v) cut off; %s led the metastore %v later, terms now %v",
		nodes[cut].id, before[cut], nodes[newLeader].id, elected.Round(100*time.Millisecond), raftTerms(nodes))

	for _, p := range []*steadyProducer{single, triple} {
		for s := -1; s < 12; s++ {
			ok, total, refused := p.tally(start.Add(time.Duration(s)*time.Second), start.Add(time.Duration(s+1)*time.Second))
			t.Logf("%s: second %d of the cut: %d of %d answered 202 %v", p.topic, s, ok, total, refused)
		}
		p.requireAnswered(start.Add(5*time.Second), end, 40, "from 5 s after the cut")
	}
	single.checkConsumable(majority[0])
	triple.checkConsumable(majority[1])
}
