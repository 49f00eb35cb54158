package server

import (
	"context"
	"fmt"
	"log/slog"

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
	return &cluster.Node{Self: self, Meta: ms, Transport: membershipTransport{pool: pool}, Peers: peerRPCAddrs(cfg),
		Log: log.With("component", "cluster")}, nil
}

// membershipTransport is cluster.Transport over node RPC.
type membershipTransport struct{ pool *rpc.Pool }

func (t membershipTransport) Join(ctx context.Context, addr string, m meta.Member) (cluster.JoinResult, error) {
	res, err := t.pool.Join(ctx, addr, rpcMember(m))
	return cluster.JoinResult{Admitted: res.Admitted, LeaderID: res.LeaderID, LeaderRPCAddr: res.LeaderRPCAddr}, err
}

func (t membershipTransport) Heartbeat(ctx context.Context, addr string, m meta.Member) error {
	return t.pool.Heartbeat(ctx, addr, rpcMember(m))
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
