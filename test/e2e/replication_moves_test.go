package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// Replicated partitions changing their replica sets on real processes: a
// decommission moves every copy off a node (leaderships first), a node
// that joins later gets its share of the copies (rebalance), and a factor
// lowered to 1 leaves a single copy serving everything it holds.

// createReplicatedN creates topic with parts partitions of rf copies
// through n and waits until n describes every partition placed and, with
// more than one copy, fully in sync.
func createReplicatedN(t *testing.T, n *node, topic string, parts, rf int) {
	t.Helper()
	body := fmt.Sprintf(`{"name":%q,"partitions":%d,"replication_factor":%d}`, topic, parts, rf)
	if st, b, _ := n.do("POST", "/v1/topics", "application/json", []byte(body)); st != http.StatusCreated {
		t.Fatalf("create %s: %d %s", topic, st, b)
	}
	eventually(t, 30*time.Second, "every partition fully in sync", func() bool {
		ps, ok := allPartitionStats(n, topic)
		if !ok || len(ps) != parts {
			return false
		}
		for _, p := range ps {
			if p.OwnerNode == "" || rf > 1 && (len(p.Replicas) != rf || len(p.InSync) != rf) {
				return false
			}
		}
		return true
	})
}

// allPartitionStats is every partition of topic as n describes it.
func allPartitionStats(n *node, topic string) ([]client.PartitionStats, bool) {
	st, b, _ := n.do("GET", "/v1/topics/"+topic, "", nil)
	if st != http.StatusOK {
		return nil, false
	}
	var d client.TopicDetail
	if json.Unmarshal(b, &d) != nil {
		return nil, false
	}
	return d.PartitionStats, true
}

// threeWithReplicated starts three nodes with an RF=3 topic of parts
// partitions, fully in sync, and a ledger for it (skipped with -short).
func threeWithReplicated(t *testing.T, topic string, parts int) ([]*node, *replLedger) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	nodes := startCluster(t, 3, "NARAD_LOG_LEVEL=info")
	createReplicatedN(t, nodes[0], topic, parts, 3)
	return nodes, newReplLedger(t, topic)
}

// partitionDirs lists the partition directories of topic on n's disk.
func partitionDirs(t *testing.T, n *node, topic string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(n.dir, "data", "topics", topic))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// produceUntil produces through the nodes given, in turn, until stop is
// closed; the ledger remembers what was answered 202.
func produceUntil(led *replLedger, via []*node, stop chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			led.produce(via[i%len(via)])
			time.Sleep(5 * time.Millisecond) // a steady trickle, not a flood
		}
	}()
	return &wg
}

// stopAndCheck stops produceUntil's producer, asks that at least least
// records were answered 202, and checks every one is consumable through n.
func stopAndCheck(t *testing.T, led *replLedger, stop chan struct{}, producing *sync.WaitGroup, least int, n *node) {
	t.Helper()
	close(stop)
	producing.Wait()
	accepted := led.snapshot()
	if len(accepted) < least {
		t.Fatalf("only %d records accepted (refused: %v)", len(accepted), led.refused)
	}
	t.Logf("refused while the replicas changed: %v", led.refused)
	checkLedger(t, led.topic, accepted, drain(t, n, led.topic, 4))
}

// TestReplicatedDecommission: an RF=3 topic on 4 nodes under produce; the
// node leading partition 0 is decommissioned. Every partition it held a
// copy of gets a replacement that catches up, its leaderships move to
// in-sync copies, it leaves every replica set and then the voters, its
// copies are deleted from its disk, and every record answered 202 is
// consumable.
func TestReplicatedDecommission(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	nodes := startCluster(t, 3, "NARAD_LOG_LEVEL=info")
	n4 := joinNode(t, nodes, "n4", testSecret, "NARAD_LOG_LEVEL=info")
	n4.waitReady()
	all := append(append([]*node{}, nodes...), n4)
	createReplicatedN(t, all[0], "rd", 4, 3)
	ps, _ := allPartitionStats(all[0], "rd")
	victim, rest := byID(all, ps[0].OwnerNode)
	held := 0
	for _, p := range ps {
		if slices.Contains(p.Replicas, victim.id) {
			held++
		}
	}
	t.Logf("decommissioning %s: it leads partition 0 and holds copies of %d of 4 partitions", victim.id, held)

	led := newReplLedger(t, "rd")
	for i := 0; i < 100; i++ {
		led.produce(all[i%len(all)])
	}
	stop := make(chan struct{})
	producing := produceUntil(led, rest, stop)

	if st, b, _ := rest[0].do("POST", "/v1/cluster/members/"+victim.id+"/decommission", "", nil); st != http.StatusOK {
		t.Fatalf("decommission %s: %d %s", victim.id, st, b)
	}
	eventually(t, 120*time.Second, victim.id+" in no replica set, every partition fully in sync, out of the voters", func() bool {
		ps, ok := allPartitionStats(rest[0], "rd")
		if !ok {
			return false
		}
		for _, p := range ps {
			if slices.Contains(p.Replicas, victim.id) || p.OwnerNode == victim.id || len(p.Replicas) != 3 || len(p.InSync) != 3 {
				return false
			}
		}
		m, ok := clusterMembers(t, rest[0])[victim.id]
		return ok && !m.Voter
	})
	eventually(t, 30*time.Second, victim.id+"'s copies deleted from its disk", func() bool {
		return len(partitionDirs(t, victim, "rd")) == 0
	})
	stopAndCheck(t, led, stop, producing, 100, rest[1])
}

// TestReplicatedRebalanceToANewNode: an RF=3 topic of four partitions on
// three nodes (four copies each) under produce; a fourth node joins. The
// controller moves copies to it until every node holds three, each move
// adding the replacement before the copy leaves, so every partition ends
// with three copies, all in sync; the copies moved off are deleted from
// their old nodes' disks, and every record answered 202 is consumable.
func TestReplicatedRebalanceToANewNode(t *testing.T) {
	t.Parallel()
	nodes, led := threeWithReplicated(t, "rb", 4)
	for i := 0; i < 50; i++ {
		led.produce(nodes[i%3])
	}
	stop := make(chan struct{})
	producing := produceUntil(led, nodes, stop)

	n4 := joinNode(t, nodes, "n4", testSecret, "NARAD_LOG_LEVEL=info")
	n4.waitReady()
	all := append(append([]*node{}, nodes...), n4)
	var last []client.PartitionStats
	defer func() {
		if t.Failed() {
			t.Logf("partitions as last described: %+v", last)
		}
	}()
	eventually(t, 120*time.Second, "three copies on every node, every partition three copies in sync", func() bool {
		ps, ok := allPartitionStats(nodes[0], "rb")
		last = ps
		if !ok || len(ps) != 4 {
			return false
		}
		held := map[string]int{}
		for _, p := range ps {
			if len(p.Replicas) != 3 || len(p.InSync) != 3 {
				return false
			}
			for _, id := range p.Replicas {
				held[id]++
			}
		}
		for _, n := range all {
			if held[n.id] != 3 {
				return false
			}
		}
		return true
	})
	eventually(t, 30*time.Second, "the copies moved off deleted from their old nodes", func() bool {
		for _, n := range all {
			if len(partitionDirs(t, n, "rb")) != 3 {
				return false
			}
		}
		return true
	})
	stopAndCheck(t, led, stop, producing, 50, n4)
}

// TestReplicationLoweredToOne: an RF=3 topic lowered to 1 by PATCH keeps
// one copy per partition (its leader's), whose log then serves everything
// it holds; produce goes on answering 202, every record answered 202 is
// consumable, and the other copies are deleted from their nodes.
func TestReplicationLoweredToOne(t *testing.T) {
	t.Parallel()
	nodes, led := threeWithReplicated(t, "rl", 2)
	// A new leader answers 503 ("taking over its leadership: retry")
	// until its epoch start is in the metastore: retry those, a while.
	warm := time.Now().Add(10 * time.Second)
	for i := 0; i < 60; i++ {
		for !led.produce(nodes[i%3]) {
			if len(led.refused) != 1 || led.refused[http.StatusServiceUnavailable] == 0 || time.Now().After(warm) {
				t.Fatalf("produce refused before the change: %v", led.refused)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	before, _ := allPartitionStats(nodes[0], "rl")
	if st, b, _ := nodes[1].do("PATCH", "/v1/topics/rl", "application/json", []byte(`{"replication_factor":1}`)); st != http.StatusOK {
		t.Fatalf("lower to 1: %d %s", st, b)
	}
	eventually(t, 30*time.Second, "one copy per partition, on its leader", func() bool {
		ps, ok := allPartitionStats(nodes[0], "rl")
		if !ok || len(ps) != 2 {
			return false
		}
		for i, p := range ps {
			if len(p.Replicas) > 1 || p.OwnerNode != before[i].OwnerNode {
				return false
			}
		}
		return true
	})
	for i := 0; i < 40; i++ {
		led.produce(nodes[i%3])
	}
	accepted := led.snapshot()
	if len(accepted) < 100 {
		t.Fatalf("only %d of 100 records accepted after lowering to 1 (refused: %v)", len(accepted), led.refused)
	}
	checkLedger(t, "rl", accepted, drain(t, nodes[2], "rl", 4))
	eventually(t, 30*time.Second, "the removed copies deleted", func() bool {
		for _, n := range nodes {
			for p, ps := range before {
				if ps.OwnerNode != n.id && slices.Contains(partitionDirs(t, n, "rl"), fmt.Sprintf("p%05d", p)) {
					return false
				}
			}
		}
		return true
	})
}
