package server

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/rpc"
)

// newMembership is this node in the cluster: its addresses (node RPC on
// the Raft port + 1, the client API's dialable form), the peers it walks
// to join, node RPC through pool.
func newMembership(cfg config.Config, n boot, ms *meta.Store, pool *rpc.Pool, log *slog.Logger) (*cluster.Node, error) {
	rpcAdvertise, err := rpcAddrOf(n.raftAdvertise)
	if err != nil {
		return nil, fmt.Errorf("cluster address %q: %w", n.raftAdvertise, err)
	}
	self := meta.Member{ID: cfg.NodeID, RaftAddr: n.raftAdvertise, RPCAddr: rpcAdvertise,
		HTTPAddr: httpAdvertise(cfg.HTTP.Addr, n.raftAdvertise), DiskID: n.disk.ID}
	timings := clusterTimings(cfg.Cluster.Network)
	if err := timings.Check(); err != nil {
		return nil, err
	}
	return &cluster.Node{Self: self, Meta: ms, Transport: membershipTransport{pool: pool, network: cfg.Cluster.Network}, Peers: peerRPCAddrs(cfg),
		Log: log.With("component", "cluster"), Timings: timings,
		HealAfter: cfg.Replication.HealAfter}, nil
}

// membershipTransport is cluster.Transport over node RPC. Heartbeats carry
// this node's cluster.network, which the leader compares with its own
// (networkcheck.go).
type membershipTransport struct {
	pool    *rpc.Pool
	network string
}

func (t membershipTransport) Join(ctx context.Context, addr string, m meta.Member) (cluster.JoinResult, error) {
	res, err := t.pool.Join(ctx, addr, rpcMember(m))
	return cluster.JoinResult{Admitted: res.Admitted, LeaderID: res.LeaderID, LeaderRPCAddr: res.LeaderRPCAddr}, err
}

func (t membershipTransport) Heartbeat(ctx context.Context, addr string, m meta.Member, reports []cluster.LeaderReport) error {
	rm := rpcMember(m)
	rm.Network = t.network
	us := make([]rpc.UnreachableLeader, len(reports))
	for i, r := range reports {
		us[i] = rpc.UnreachableLeader(r) // stops compiling if the two drift apart
	}
	return t.pool.Heartbeat(ctx, addr, rm, us...)
}

// unreachableLeaders is cluster.Node.Unreachable over the broker's
// followers: how long each has failed to reach its leader, as of now.
func unreachableLeaders(b *broker.Broker, now func() time.Time) func() []cluster.LeaderReport {
	return func() []cluster.LeaderReport {
		var out []cluster.LeaderReport
		t := now()
		for _, u := range b.UnreachableLeaders() {
			out = append(out, cluster.LeaderReport{Topic: u.Topic, Partition: u.Partition, Leader: u.Leader, LeaderEpoch: u.Epoch,
				For: max(0, t.Sub(u.Since))})
		}
		return out
	}
}

func rpcMember(m meta.Member) rpc.Member {
	return rpc.Member{ID: m.ID, RaftAddr: m.RaftAddr, RPCAddr: m.RPCAddr, HTTPAddr: m.HTTPAddr, DiskID: m.DiskID}
}

func metaMember(m rpc.Member) meta.Member {
	return meta.Member{ID: m.ID, RaftAddr: m.RaftAddr, RPCAddr: m.RPCAddr, HTTPAddr: m.HTTPAddr, DiskID: m.DiskID}
}

// memberCounts feeds narad_members: the member records by state, read at
// scrape time; a single node (no member records) counts itself alive, as
// the /v1/cluster/members answer shows it.
func memberCounts(ms *meta.Store) func() metrics.MemberCounts {
	return func() metrics.MemberCounts {
		members := ms.Members()
		if len(members) == 0 {
			return metrics.MemberCounts{Alive: 1}
		}
		var c metrics.MemberCounts
		for _, m := range members {
			if m.State == meta.MemberDead {
				c.Dead++
			} else {
				c.Alive++
			}
			if m.Draining {
				c.Draining++
			}
		}
		return c
	}
}

// placements is what replicationCounts reads of the metastore replica
// (*meta.Store), an interface so its test can hand it records directly.
type placements interface {
	Topics() []meta.Topic
	Assignments(topic string) []meta.Assignment
	Members() []meta.Member
}

// replicationCounts feeds narad_replicated_partitions: every replicated
// partition in one state, read from this node's replica at scrape time,
// so every node reports the same cluster-wide figures. A remote topic's
// record is a link to another cluster, not partitions here: skipped, as
// the broker skips it.
func replicationCounts(ms placements) func() metrics.ReplicationCounts {
	return func() metrics.ReplicationCounts {
		var c metrics.ReplicationCounts
		var dead map[string]bool // read once, on the first replicated partition
		for _, t := range ms.Topics() {
			if t.Remote != nil {
				continue
			}
			for _, a := range ms.Assignments(t.Name) {
				if !a.Replicated() {
					continue
				}
				if dead == nil {
					dead = deadMembers(ms.Members())
				}
				switch {
				case !hasLeader(a, dead):
					c.WithoutLeader++
				case len(a.InSync) < len(a.Replicas) || slices.ContainsFunc(a.Replicas, func(id string) bool { return dead[id] }):
					// A follower on a dead member may stay in the set
					// (never below a majority: at two copies, always).
					c.UnderReplicated++
				default:
					c.InSync++
				}
			}
		}
		return c
	}
}

// hasLeader reports whether a replicated partition has a leader that can
// take writes: its member record is not dead, and it is in its own
// in-sync set (the cases in which the controller elects another, package
// cluster's failover). The second rule also covers no leader named (no in-sync
// set holds the empty id) and a replaced disk: meta.ReplaceDisk takes the
// node out of every in-sync set but leaves it leader, with none of the
// records, until the controller elects a member of the set.
func hasLeader(a meta.Assignment, dead map[string]bool) bool {
	return !dead[a.Owner] && slices.Contains(a.InSync, a.Owner)
}

// deadMembers is the ids of the member records in state dead.
func deadMembers(members []meta.Member) map[string]bool {
	dead := map[string]bool{}
	for _, m := range members {
		if m.State == meta.MemberDead {
			dead[m.ID] = true
		}
	}
	return dead
}
