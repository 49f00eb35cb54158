package move

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// Pool is what NodeRemote needs of node RPC (*rpc.Pool): the source's copy
// calls and the flip, by node-RPC address.
type Pool interface {
	MoveFreeze(ctx context.Context, addr, topic string, p int, ttl time.Duration, holder string) (uint64, error)
	MoveFiles(ctx context.Context, addr, topic string, p int) ([]storage.PartitionFile, uint64, error)
	MoveRead(ctx context.Context, addr, topic string, p int, name string, off, n int64) ([]byte, error)
	Flip(ctx context.Context, addr, topic string, p int, from, to string) error
}

// Addresses finds members' node-RPC addresses (*cluster.Node).
type Addresses interface {
	RPCAddrOf(id string) (string, bool)
	LeaderRPC() string
}

// NodeRemote is the Remote of a clustered node: node RPC to the source,
// the flip on the leader (here when this node leads).
type NodeRemote struct {
	meta    Meta
	pool    Pool
	addrs   Addresses
	maxRead int64
}

// NewNodeRemote calls other nodes through pool; maxRead is the longest
// read node RPC answers (rpc.MaxMoveRead): longer ones are asked in parts.
func NewNodeRemote(ms Meta, pool Pool, addrs Addresses, maxRead int64) *NodeRemote {
	return &NodeRemote{meta: ms, pool: pool, addrs: addrs, maxRead: maxRead}
}

func (r *NodeRemote) addr(node string) (string, error) {
	if a, ok := r.addrs.RPCAddrOf(node); ok {
		return a, nil
	}
	return "", refusal.New(refusal.ErrUnavailable, time.Second, "node %q has no known address", node)
}

func (r *NodeRemote) MoveFreeze(ctx context.Context, node, topic string, p int, ttl time.Duration, holder string) (uint64, error) {
	addr, err := r.addr(node)
	if err != nil {
		return 0, err
	}
	return r.pool.MoveFreeze(ctx, addr, topic, p, ttl, holder)
}

func (r *NodeRemote) MoveFiles(ctx context.Context, node, topic string, p int) ([]storage.PartitionFile, uint64, error) {
	addr, err := r.addr(node)
	if err != nil {
		return nil, 0, err
	}
	return r.pool.MoveFiles(ctx, addr, topic, p)
}

func (r *NodeRemote) MoveRead(ctx context.Context, node, topic string, p int, name string, off, n int64) ([]byte, error) {
	addr, err := r.addr(node)
	if err != nil {
		return nil, err
	}
	if r.maxRead > 0 {
		n = min(n, r.maxRead)
	}
	return r.pool.MoveRead(ctx, addr, topic, p, name, off, n)
}

// Flip completes a move on the leader (here, or by node RPC).
func (r *NodeRemote) Flip(ctx context.Context, topic string, p int, from, to string) error {
	if r.meta.IsLeader() {
		return r.meta.FlipOwner(ctx, topic, p, from, to)
	}
	addr := r.addrs.LeaderRPC()
	if addr == "" {
		return refusal.New(refusal.ErrUnavailable, time.Second, "no leader known")
	}
	return r.pool.Flip(ctx, addr, topic, p, from, to)
}
