package e2e

import (
	"fmt"
	"math/rand"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

const testSecret = "e2e-cluster-secret"

// freePortPair finds a loopback port p with p+1 free too (Raft on p, node
// RPC on p+1).
func freePortPair(t testing.TB) string {
	t.Helper()
	for i := 0; i < 1000; i++ {
		p := testPortLow + rand.Intn(testPortHigh-testPortLow-1)
		if portFree(p) && portFree(p+1) && claim(p, p+1) {
			return fmt.Sprintf("127.0.0.1:%d", p)
		}
	}
	t.Fatal("no free test port pair")
	return ""
}

// newClusterNode prepares (does not start) a node of a cluster.
func newClusterNode(t testing.TB, id string, extra ...string) *node {
	n := &node{t: t, id: id, dir: t.TempDir(), http: freeAddr(t), cluster: freePortPair(t), env: extra}
	n.c = client.New("http://"+n.http, "", "", &http.Client{Timeout: 30 * time.Second})
	t.Cleanup(func() {
		n.stopWith(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("logs of %s:\n%s", n.id, tail(n.logs.String(), 3000))
		}
	})
	return n
}

// startCluster starts size nodes that bootstrap together.
func startCluster(t testing.TB, size int, extra ...string) []*node {
	t.Helper()
	return startClusterWith(t, size, nil, extra...)
}

// startClusterWith is startCluster with prepare called on each node
// before it starts (its binary, its own environment).
func startClusterWith(t testing.TB, size int, prepare func(i int, n *node), extra ...string) []*node {
	t.Helper()
	nodes := make([]*node, size)
	var peers, ids []string
	for i := range nodes {
		nodes[i] = newClusterNode(t, fmt.Sprintf("n%d", i+1), extra...)
		if prepare != nil {
			prepare(i, nodes[i])
		}
		peers = append(peers, nodes[i].id+"@"+nodes[i].cluster)
		ids = append(ids, nodes[i].id)
	}
	for _, n := range nodes {
		n.env = append(n.env, "NARAD_CLUSTER_PEERS="+strings.Join(peers, ","),
			"NARAD_CLUSTER_INITIAL_MEMBERS="+strings.Join(ids, ","), "NARAD_CLUSTER_SECRET="+testSecret)
		n.startAsync()
	}
	for _, n := range nodes {
		n.waitReady()
	}
	return nodes
}

// startAsync starts the process without waiting for readiness (cluster
// members only become ready together).
func (n *node) startAsync() {
	n.t.Helper()
	saved := n.t
	n.startNoWait()
	n.t = saved
}

// joinNode starts (without waiting) a node that is not an initial member
// of nodes' cluster: it joins through their peers list, presenting secret.
func joinNode(t testing.TB, nodes []*node, id, secret string, extra ...string) *node {
	t.Helper()
	var peers, ids []string
	for _, n := range nodes {
		peers = append(peers, n.id+"@"+n.cluster)
		ids = append(ids, n.id)
	}
	n := newClusterNode(t, id, extra...)
	n.env = append(n.env, "NARAD_CLUSTER_PEERS="+strings.Join(peers, ","),
		"NARAD_CLUSTER_INITIAL_MEMBERS="+strings.Join(ids, ","), "NARAD_CLUSTER_SECRET="+secret)
	n.startNoWait()
	return n
}

// leaderIndex returns the index of the node that reports itself Raft
// leader, waiting for one.
func leaderIndex(t *testing.T, nodes []*node) int {
	t.Helper()
	leader := -1
	eventually(t, 20*time.Second, "a leader shows in metrics", func() bool {
		for i, n := range nodes {
			if n.metric("narad_raft_is_leader") == 1 {
				leader = i
				return true
			}
		}
		return false
	})
	return leader
}

// signal sends sig without waiting for the process to exit (SIGSTOP,
// SIGCONT). A stopped process still dies of the cleanup's SIGKILL.
func (n *node) signal(sig syscall.Signal) {
	n.t.Helper()
	n.mu.Lock()
	cmd := n.cmd
	n.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil {
		n.t.Fatalf("signal %v to %s: %v", sig, n.id, err)
	}
}
