package server

import (
	"context"

	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/rpc"
)

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
	return rpc.Member{ID: m.ID, RaftAddr: m.RaftAddr, RPCAddr: m.RPCAddr, HTTPAddr: m.HTTPAddr}
}

func metaMember(m rpc.Member) meta.Member {
	return meta.Member{ID: m.ID, RaftAddr: m.RaftAddr, RPCAddr: m.RPCAddr, HTTPAddr: m.HTTPAddr}
}
