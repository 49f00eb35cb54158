package server

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/rpc"
)

// moveRemote is move.Remote over node RPC: the source's copy session, and
// the flip on the leader (here, or by node RPC).
type moveRemote struct {
	ms    *meta.Store
	peers peers
}

func (m moveRemote) MoveFreeze(ctx context.Context, node, topic string, p int, ttl time.Duration, holder string) (uint64, error) {
	addr, err := m.peers.addr(node)
	if err != nil {
		return 0, err
	}
	return m.peers.pool.MoveFreeze(ctx, addr, topic, p, ttl, holder)
}

func (m moveRemote) MoveFiles(ctx context.Context, node, topic string, p int) ([]rpc.MoveFile, uint64, error) {
	addr, err := m.peers.addr(node)
	if err != nil {
		return nil, 0, err
	}
	return m.peers.pool.MoveFiles(ctx, addr, topic, p)
}

func (m moveRemote) MoveRead(ctx context.Context, node, topic string, p int, name string, off, n int64) ([]byte, error) {
	addr, err := m.peers.addr(node)
	if err != nil {
		return nil, err
	}
	return m.peers.pool.MoveRead(ctx, addr, topic, p, name, off, n)
}

func (m moveRemote) Flip(ctx context.Context, topic string, p int, from, to string) error {
	if m.ms.IsLeader() {
		return m.ms.FlipOwner(ctx, topic, p, from, to)
	}
	addr := m.peers.dir.LeaderRPC()
	if addr == "" {
		return apierr.Unavailable(time.Second, "no leader known")
	}
	return m.peers.pool.Flip(ctx, addr, topic, p, from, to)
}
