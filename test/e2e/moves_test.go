package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

type memberView struct {
	ID         string `json:"id"`
	Draining   bool   `json:"draining"`
	Voter      bool   `json:"voter"`
	Partitions int    `json:"partitions"`
}

func clusterMembers(t *testing.T, n *node) map[string]memberView {
	t.Helper()
	status, body, _ := n.do("GET", "/v1/cluster/members", "", nil)
	if status != http.StatusOK {
		t.Fatalf("members: %d %s", status, body)
	}
	var out struct {
		Members []memberView `json:"members"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	m := map[string]memberView{}
	for _, v := range out.Members {
		m[v.ID] = v
	}
	return m
}

// TestClusterMovesRebalanceAndDecommission (docs/architecture.md, "Moves"): a
// fourth node joins a loaded cluster and the planner moves partitions to it —
// each copied while produce flows, frozen, verified and flipped — until every
// node owns its share; then that node is decommissioned, sheds them all and
// leaves the Raft voters. Produce never stops; every accepted record is
// delivered from the parent and from its replica child (duplicates allowed,
// no loss).
func TestClusterMovesRebalanceAndDecommission(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts and moves a cluster")
	}
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "mv", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "mv-copy", Parent: "mv"}); err != nil {
		t.Fatal(err)
	}

	stopProduce := trickle(ctx, "mv", func(i int) *node { return nodes[i%len(nodes)] })

	n4 := joinNode(t, nodes, "n4", testSecret)
	n4.waitReady()
	eventually(t, 60*time.Second, "n4 owns its share (3 of 12) and no move is in flight", func() bool {
		return clusterMembers(t, nodes[0])["n4"].Partitions == 3 && movesInFlight(nodes[0]) == 0
	})
	for id, m := range clusterMembers(t, nodes[0]) {
		if m.Partitions != 3 {
			t.Fatalf("after the rebalance %s owns %d partitions", id, m.Partitions)
		}
	}

	status, body, _ := nodes[1].do("POST", "/v1/cluster/members/n4/decommission", "", nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"draining":true`) {
		t.Fatalf("decommission: %d %s", status, body)
	}
	eventually(t, 60*time.Second, "n4 empty and out of the voters", func() bool {
		m := clusterMembers(t, nodes[0])["n4"]
		return m.Partitions == 0 && !m.Voter && movesInFlight(nodes[0]) == 0
	})

	accepted := stopProduce()
	checkLedger(t, "mv", accepted, drain(t, nodes[2], "mv", 4))
	checkLedger(t, "mv-copy", accepted, drain(t, nodes[0], "mv-copy", 4))
}

// moves lists the moves in flight as n sees them; ok is false when n does
// not answer (it may be down).
func moves(n *node) (list []moveView, ok bool) {
	resp, err := http.Get(n.url("/v1/cluster/moves"))
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var out struct {
		Moves []moveView `json:"moves"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		return nil, false
	}
	return out.Moves, true
}

// movesInFlight counts them; -1 when n does not answer, so a wait for
// "no move in flight" cannot pass on a silent node.
func movesInFlight(n *node) int {
	list, ok := moves(n)
	if !ok {
		return -1
	}
	return len(list)
}

// trickle produces id-0, id-1, … to topic through via(i), one at a time
// with a short pause (a steady load, not a flood: these tests are about
// moves), until the returned stop is called; stop returns the ids
// answered 202.
func trickle(ctx context.Context, topic string, via func(i int) *node) (stop func() map[int]bool) {
	var mu sync.Mutex
	accepted := map[int]bool{}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; pctx.Err() == nil; i++ {
			if err := via(i).c.Produce(pctx, topic, []byte(fmt.Sprintf("id-%d", i)), client.ProduceOptions{}); err == nil {
				mu.Lock()
				accepted[i] = true
				mu.Unlock()
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return func() map[int]bool {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return accepted
	}
}

type moveView struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// TestClusterMovesSurviveSIGKILL: the destination, then a source, is
// SIGKILLed while moves are in flight, under produce. Sessions start over,
// the source's freeze survives its restart until the leader says it still
// owns the partition, and no accepted record is lost.
func TestClusterMovesSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "km", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "km-copy", Parent: "km"}); err != nil {
		t.Fatal(err)
	}
	stopProduce := trickle(ctx, "km", func(int) *node { return nodes[2] }) // nodes[2] is never killed here

	n4 := joinNode(t, nodes, "n4", testSecret)
	n4.waitReady()
	eventually(t, 30*time.Second, "moves to n4 in flight", func() bool { return movesInFlight(nodes[2]) > 0 })
	n4.kill() // the destination dies mid-move
	n4.start()

	var victim *node
	eventually(t, 30*time.Second, "a move in flight from n1 or n2", func() bool {
		list, _ := moves(nodes[2])
		for _, m := range list {
			for _, n := range nodes[:2] {
				if m.From == n.id {
					victim = n
					return true
				}
			}
		}
		return false
	})
	victim.kill() // a source dies mid-move
	victim.start()

	eventually(t, 90*time.Second, "balanced (3 of 12 each) with no move in flight", func() bool {
		ms := clusterMembers(t, nodes[2])
		for _, id := range []string{"n1", "n2", "n3", "n4"} {
			if ms[id].Partitions != 3 {
				return false
			}
		}
		return movesInFlight(nodes[2]) == 0
	})
	accepted := stopProduce()
	checkLedger(t, "km", accepted, drain(t, nodes[2], "km", 4))
	checkLedger(t, "km-copy", accepted, drain(t, nodes[2], "km-copy", 4))
}

// TestClusterDecommissionTheLeader: decommissioning the node that leads
// Raft moves its partitions away, hands leadership over, and the new
// leader removes it from the voters; the cluster keeps serving.
func TestClusterDecommissionTheLeader(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	nodes := startCluster(t, 3)
	n4 := joinNode(t, nodes, "n4", testSecret)
	n4.waitReady()
	all := append(append([]*node{}, nodes...), n4)
	ctx := ctxT(t)
	if _, err := n4.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "lead", Partitions: 8}); err != nil {
		t.Fatal(err)
	}
	var leader string
	var others []*node
	eventually(t, 10*time.Second, "a leader among the voters", func() bool {
		status, body, _ := n4.do("GET", "/v1/cluster/members", "", nil)
		var out struct {
			Members []struct {
				ID     string `json:"id"`
				Leader bool   `json:"leader"`
			} `json:"members"`
		}
		json.Unmarshal(body, &out)
		for _, m := range out.Members {
			if m.Leader {
				leader = m.ID
			}
		}
		return status == http.StatusOK && leader != ""
	})
	for _, n := range all {
		if n.id != leader {
			others = append(others, n)
		}
	}
	status, body, _ := others[0].do("POST", "/v1/cluster/members/"+leader+"/decommission", "", nil)
	if status != http.StatusOK {
		t.Fatalf("decommission the leader %s: %d %s", leader, status, body)
	}
	eventually(t, 90*time.Second, leader+" empty and out of the voters", func() bool {
		m, ok := clusterMembers(t, others[0])[leader]
		return ok && m.Partitions == 0 && !m.Voter && movesInFlight(others[0]) == 0
	})
	// The three remaining voters serve: a topic created now lands on them.
	if _, err := others[1].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "after", Partitions: 6}); err != nil {
		t.Fatalf("create after the leader left: %v", err)
	}
	var d client.TopicDetail
	eventually(t, 10*time.Second, "the new topic seen elsewhere", func() bool {
		var err error
		d, err = others[2].c.GetTopic(ctx, "after")
		return err == nil
	})
	for _, ps := range d.PartitionStats {
		if ps.OwnerNode == leader {
			t.Fatalf("a new partition went to the decommissioned %s", leader)
		}
	}
	accepted := map[int]bool{}
	for i := 0; i < 30; i++ {
		if err := others[i%3].c.Produce(ctx, "lead", []byte(fmt.Sprintf("id-%d", i)), client.ProduceOptions{}); err != nil {
			t.Fatal(err)
		}
		accepted[i] = true
	}
	checkLedger(t, "lead", accepted, drain(t, others[0], "lead", 4))
}
