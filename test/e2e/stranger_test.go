package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/narad-io/narad/client"
	nodepb "github.com/narad-io/narad/internal/rpc/proto"
)

// The attack of issue 9: a program that can reach a node's cluster port
// speaks hashicorp/raft's own protocol to it, with a far higher term and a
// log entry, to become its "leader" and commit what it likes. It must get
// no answer, and the node must go on as before.
func strangerAppendEntries(t *testing.T, target string) error {
	t.Helper()
	stranger, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 3*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	defer stranger.CloseStreams()
	self := []byte(stranger.LocalAddr())
	req := &raft.AppendEntriesRequest{
		RPCHeader:    raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("stranger"), Addr: self},
		Term:         1 << 40,
		PrevLogEntry: 0, PrevLogTerm: 0,
		Entries:           []*raft.Log{{Index: 1, Term: 1 << 40, Type: raft.LogCommand, Data: []byte(`{"op":"user.create"}`)}},
		LeaderCommitIndex: 1,
	}
	var resp raft.AppendEntriesResponse
	return stranger.AppendEntries("victim", raft.ServerAddress(target), req, &resp)
}

// strangerRPC calls node RPC without passing the peer handshake, even
// presenting the right secret as call metadata (as one read off a
// plaintext wire would).
func strangerRPC(t *testing.T, rpcAddr string) error {
	t.Helper()
	cc, err := grpc.NewClient(rpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "narad-secret "+testSecret)
	_, err = nodepb.NewNodeClient(cc).Heartbeat(ctx, &nodepb.HeartbeatRequest{})
	return err
}

func rpcPortOf(t *testing.T, clusterAddr string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(clusterAddr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return net.JoinHostPort(host, strconv.Itoa(p+1))
}

func refusedAt(n *node, plane string) float64 {
	var sum float64
	for _, v := range n.series(`narad_cluster_connections_refused_total{plane="` + plane + `"`) {
		sum += v
	}
	return sum
}

func TestRaftStrangerRefusedSingleNode(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	eventually(t, 10*time.Second, "the node leads", func() bool { return n.metric("narad_raft_is_leader") == 1 })
	term := n.metric("narad_raft_term")
	if err := strangerAppendEntries(t, n.cluster); err == nil {
		t.Fatal("the single node answered a stranger's AppendEntries")
	} else {
		t.Logf("the stranger's AppendEntries: %v", err)
	}
	eventually(t, 10*time.Second, "the refusal counted", func() bool { return refusedAt(n, "raft") >= 1 })
	// The listener counts a refusal before it logs it, and the log reaches
	// the harness through a pipe: wait for the line too.
	eventually(t, 10*time.Second, "the refusal logged", func() bool {
		return strings.Contains(n.logs.String(), "refused a connection to the cluster port")
	})
	// Nothing changed: the node still leads its own Raft in the same term
	// (the gauges are read at scrape time; the stranger's term would have
	// made it step down) and writes metadata.
	if v, now := n.metric("narad_raft_is_leader"), n.metric("narad_raft_term"); v != 1 || now != term {
		t.Fatalf("after the attack: is_leader %v, term %v (was %v)", v, now, term)
	}
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "after-attack", Partitions: 1}); err != nil {
		t.Fatalf("metadata write after the attack: %v", err)
	}
	if err := n.c.Readyz(ctx); err != nil {
		t.Fatalf("not ready after the attack: %v", err)
	}
}

// A node with no peers binds its Raft port to loopback when cluster.addr
// names every interface (the default).
func TestSingleNodeRaftOnLoopbackByDefault(t *testing.T) {
	_, port, _ := net.SplitHostPort(freeAddr(t))
	n := startNode(t, "NARAD_CLUSTER_ADDR=:"+port)
	if got := listenAddrs(t, port); len(got) != 1 || got[0] != "0100007F" {
		t.Fatalf("the Raft port listens on %v (hex, /proc/net/tcp*), want loopback only (0100007F)", got)
	}
	if err := strangerAppendEntries(t, "127.0.0.1:"+port); err == nil {
		t.Fatal("the loopback Raft port answered a stranger")
	}
	eventually(t, 10*time.Second, "the refusal counted", func() bool { return refusedAt(n, "raft") >= 1 })
}

func TestClusterStrangerRefused(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	leaderBefore := clusterLeader(t, nodes[0])
	for _, n := range nodes {
		if err := strangerAppendEntries(t, n.cluster); err == nil {
			t.Fatalf("%s answered a stranger's AppendEntries", n.id)
		}
		if err := strangerRPC(t, rpcPortOf(t, n.cluster)); err == nil {
			t.Fatalf("%s served node RPC to a stranger that skipped the handshake", n.id)
		}
	}
	for _, n := range nodes {
		eventually(t, 10*time.Second, n.id+" counts both refusals", func() bool {
			return refusedAt(n, "raft") >= 1 && refusedAt(n, "rpc") >= 1
		})
	}
	// Nothing changed: same leader, and metadata writes work through
	// every node (a stranger "leader" would make them answer 503).
	if got := clusterLeader(t, nodes[1]); got != leaderBefore {
		t.Fatalf("leader changed from %s to %s after the attack", leaderBefore, got)
	}
	for i, n := range nodes {
		if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: fmt.Sprintf("after-%d", i), Partitions: 1}); err != nil {
			t.Fatalf("metadata write through %s after the attack: %v", n.id, err)
		}
	}
}

// listenAddrs are the local addresses (as the kernel prints them, hex)
// of the sockets listening on port, from /proc/net/tcp and tcp6.
func listenAddrs(t *testing.T, port string) []string {
	t.Helper()
	p, _ := strconv.Atoi(port)
	want := fmt.Sprintf(":%04X", p)
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) > 3 && fs[3] == "0A" && strings.HasSuffix(fs[1], want) { // 0A: LISTEN
				out = append(out, strings.TrimSuffix(fs[1], want))
			}
		}
	}
	return out
}

func clusterLeader(t *testing.T, n *node) string {
	t.Helper()
	var leader string
	eventually(t, 10*time.Second, "a leader in the members list", func() bool {
		ms, err := n.c.Members(ctxT(t))
		if err != nil {
			return false
		}
		for _, m := range ms {
			if m.Leader {
				leader = m.ID
				return true
			}
		}
		return false
	})
	return leader
}
