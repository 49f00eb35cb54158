package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// Replicated partitions (docs/replication.md) on real processes: a topic with
// three copies on three nodes loses its leader for good, then that node's
// disk; and loses two of its three nodes.

// createReplicated creates topic with one partition of rf copies through n
// and waits until every node's describe shows the full in-sync set.
func createReplicated(t *testing.T, nodes []*node, topic string, rf int) {
	t.Helper()
	body := fmt.Sprintf(`{"name":%q,"partitions":1,"replication_factor":%d}`, topic, rf)
	if st, b, _ := nodes[0].do("POST", "/v1/topics", "application/json", []byte(body)); st != http.StatusCreated {
		t.Fatalf("create %s: %d %s", topic, st, b)
	}
	for _, n := range nodes {
		eventually(t, 20*time.Second, n.id+" to see the partition fully in sync", func() bool {
			ps, ok := partitionStats(n, topic)
			return ok && ps.OwnerNode != "" && len(ps.Replicas) == rf && len(ps.InSync) == rf
		})
	}
}

// partitionStats is partition 0 of topic as n describes it.
func partitionStats(n *node, topic string) (client.PartitionStats, bool) {
	st, b, _ := n.do("GET", "/v1/topics/"+topic, "", nil)
	if st != http.StatusOK {
		return client.PartitionStats{}, false
	}
	var d client.TopicDetail
	if json.Unmarshal(b, &d) != nil || len(d.PartitionStats) == 0 {
		return client.PartitionStats{}, false
	}
	return d.PartitionStats[0], true
}

func byID(nodes []*node, id string) (*node, []*node) {
	var victim *node
	var rest []*node
	for _, n := range nodes {
		if n.id == id {
			victim = n
		} else {
			rest = append(rest, n)
		}
	}
	return victim, rest
}

// replLedger produces id-numbered records with msg ids through the nodes
// given and remembers which were answered 202, and the message id each
// was answered with.
type replLedger struct {
	t        *testing.T
	topic    string
	mu       sync.Mutex
	next     int
	accepted map[int]bool
	ids      map[int]string
	refused  map[int]int // status -> count
	into     *int        // the partition to produce into; nil: the server spreads them
}

func newReplLedger(t *testing.T, topic string) *replLedger {
	return &replLedger{t: t, topic: topic, accepted: map[int]bool{}, ids: map[int]string{}, refused: map[int]int{}}
}

// produce sends one record through n; true when it was answered 202.
func (l *replLedger) produce(n *node) bool {
	l.mu.Lock()
	l.next++
	id := l.next
	l.mu.Unlock()
	acc, err := n.c.ProduceWithID(ctxT(l.t), l.topic, []byte(fmt.Sprintf("id-%d", id)), client.ProduceOptions{MsgID: fmt.Sprintf("m-%d", id), Partition: l.into})
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.refused[client.StatusOf(err)]++
		return false
	}
	l.accepted[id], l.ids[id] = true, acc.ID
	return true
}

// idOf is the message id record id-n was answered with ("" if none).
func (l *replLedger) idOf(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ids[n]
}

func (l *replLedger) snapshot() map[int]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int]bool, len(l.accepted))
	for k, v := range l.accepted {
		out[k] = v
	}
	return out
}

// TestReplicatedLeaderSIGKILLThenDiskLoss: under produce and consume, the
// leader of an RF=3 partition is SIGKILLed and not restarted. A follower
// takes over (the time it took is logged; the test asks only that it
// happens), every record answered 202 is consumable, duplicates are
// counted. Then the dead node's data directory is deleted and it starts
// empty: it copies the partition back from the leader and rejoins the
// in-sync set. The nodes call each other through gRPC alone
// (cluster.framed_rpc off), so the transport a node falls back to, and
// an older release speaks, is tested through a kill and a lost disk too;
// every other cluster test runs on the default, framed connections.
func TestReplicatedLeaderSIGKILLThenDiskLoss(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 3, "NARAD_LOG_LEVEL=info", "NARAD_CLUSTER_FRAMED_RPC=false")
	createReplicated(t, nodes, "rep", 3)
	ps, _ := partitionStats(nodes[0], "rep")
	leader, survivors := byID(nodes, ps.OwnerNode)
	led := newReplLedger(t, "rep")

	// A consumer on the survivors throughout, acking what it gets.
	got := map[int]int{}
	var gmu sync.Mutex
	stop := make(chan struct{})
	var cwg sync.WaitGroup
	cwg.Add(1)
	go func() {
		defer cwg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n := survivors[i%2]
			msgs, err := n.c.Consume(ctxT(t), "rep", client.ConsumeOptions{Max: 100, Wait: 200 * time.Millisecond})
			if err != nil {
				continue // the partition is changing leaders: 503 meanwhile
			}
			var hs []string
			gmu.Lock()
			for _, m := range msgs {
				b, _ := m.Bytes()
				var id int
				fmt.Sscanf(string(b), "id-%d", &id)
				got[id]++
				hs = append(hs, m.ReceiptHandle)
			}
			gmu.Unlock()
			if len(hs) > 0 {
				n.c.AckBatch(ctxT(t), "rep", hs)
			}
		}
	}()

	for i := 0; i < 150; i++ {
		if !led.produce(nodes[i%3]) {
			t.Fatalf("produce with every replica up refused: %+v", led.refused)
		}
	}

	killed := time.Now()
	leader.kill()
	var took time.Duration
	var last client.PartitionStats
	defer func() {
		if t.Failed() {
			t.Logf("partition as %s last described it: %+v; refusals %v", survivors[0].id, last, led.refused)
		}
	}()
	eventually(t, 40*time.Second, "a new leader to take a produce", func() bool {
		ps, ok := partitionStats(survivors[0], "rep")
		last = ps
		if !ok || ps.OwnerNode == leader.id || ps.OwnerNode == "" {
			return false
		}
		if led.produce(survivors[0]) {
			took = time.Since(killed)
			return true
		}
		return false
	})
	t.Logf("a new leader took a produce %v after the leader was SIGKILLed", took.Round(time.Millisecond))
	// After the takeover every produce is answered 202: the new leader
	// and the other survivor are a majority (bounded, so a stall fails
	// the test instead of hanging it).
	after := time.Now().Add(20 * time.Second)
	for i := 0; i < 150 && time.Now().Before(after); i++ {
		if !led.produce(survivors[i%2]) {
			t.Errorf("produce %d after the takeover refused", i)
		}
	}
	accepted := led.snapshot()
	eventually(t, 30*time.Second, "every record answered 202 to be consumed", func() bool {
		gmu.Lock()
		defer gmu.Unlock()
		for id := range accepted {
			if got[id] == 0 {
				return false
			}
		}
		return true
	})
	close(stop)
	cwg.Wait()
	checkLedger(t, "rep", accepted, got)
	t.Logf("produce refusals by status while the leader changed: %v", led.refused)

	// The dead node's disk is gone: it starts empty and copies back.
	if err := os.RemoveAll(filepath.Join(leader.dir, "data")); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	leader.startAsync()
	leader.waitReady()
	eventually(t, 40*time.Second, leader.id+" back in the in-sync set", func() bool {
		ps, ok := partitionStats(survivors[0], "rep")
		return ok && slices.Contains(ps.InSync, leader.id)
	})
	t.Logf("%s, started empty, was in sync again %v after its restart", leader.id, time.Since(back).Round(time.Millisecond))
}

// TestReplicatedQuorumLoss: with two of three nodes down, a produce to an
// RF=3 topic answers 503, never 202; once they are back, every record
// acknowledged before is still there.
func TestReplicatedQuorumLoss(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 3)
	createReplicated(t, nodes, "qrep", 3)
	led := newReplLedger(t, "qrep")
	for i := 0; i < 60; i++ {
		if !led.produce(nodes[i%3]) {
			t.Fatalf("produce with every replica up refused: %+v", led.refused)
		}
	}
	accepted := led.snapshot()
	ps, _ := partitionStats(nodes[0], "qrep")
	// Keep the leader up (the harder case: it holds every record and
	// could commit them alone) and kill the two followers.
	leader, followers := byID(nodes, ps.OwnerNode)
	for _, n := range followers {
		n.kill()
	}
	for i := 0; i < 3; i++ {
		err := leader.c.Produce(ctxT(t), "qrep", []byte(fmt.Sprintf("lost-%d", i)), client.ProduceOptions{})
		if client.StatusOf(err) != http.StatusServiceUnavailable {
			t.Fatalf("produce with two of three replicas down: %v, want 503", err)
		}
	}
	// The leader says why it takes no write: in its describe, naming the
	// followers it waits for, and in its metrics.
	stallSeries := `narad_partition_commit_stalls_total{partition="0",topic="qrep"}`
	eventually(t, 20*time.Second, "the leader's describe and metrics show the stall", func() bool {
		ps, ok := partitionStats(leader, "qrep")
		if !ok || leader.metric(stallSeries) < 1 {
			return false
		}
		for _, n := range followers {
			if !strings.Contains(ps.CommitStall, n.id+" (") {
				return false
			}
		}
		return true
	})
	for _, n := range followers {
		n.startAsync()
	}
	for _, n := range followers {
		n.waitReady()
	}
	got := map[int]int{}
	eventually(t, 40*time.Second, "every acknowledged record consumable after the quorum is back", func() bool {
		msgs, err := leader.c.Consume(ctxT(t), "qrep", client.ConsumeOptions{Max: 100, Wait: 200 * time.Millisecond})
		if err == nil {
			var hs []string
			for _, m := range msgs {
				b, _ := m.Bytes()
				var id int
				if _, err := fmt.Sscanf(string(b), "id-%d", &id); err == nil {
					got[id]++
				}
				hs = append(hs, m.ReceiptHandle)
			}
			if len(hs) > 0 {
				leader.c.AckBatch(ctxT(t), "qrep", hs)
			}
		}
		for id := range accepted {
			if got[id] == 0 {
				return false
			}
		}
		return true
	})
	checkLedger(t, "qrep", accepted, got)
	eventually(t, 10*time.Second, "no commit stall once the followers are back", func() bool {
		ps, ok := partitionStats(leader, "qrep")
		return ok && ps.CommitStall == ""
	})
}
