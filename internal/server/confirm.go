package server

import (
	"context"
	"fmt"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/rpc"
)

// leaderConfirmer is the metastore's Confirmer: it asks the leader over
// node RPC, at the address in the leader's member record. It needs only
// the pool, so it exists before the metastore does (meta.Options).
type leaderConfirmer struct{ pool *rpc.Pool }

func (c leaderConfirmer) addr(leader meta.Member) (string, error) {
	if leader.RPCAddr == "" {
		return "", fmt.Errorf("leader %q has no known node-RPC address", leader.ID)
	}
	return leader.RPCAddr, nil
}

func (c leaderConfirmer) ConfirmTopic(ctx context.Context, leader meta.Member, name, epoch string) (bool, bool, error) {
	addr, err := c.addr(leader)
	if err != nil {
		return false, false, err
	}
	return c.pool.ConfirmTopic(ctx, addr, name, epoch)
}

func (c leaderConfirmer) ConfirmOwner(ctx context.Context, leader meta.Member, topic string, p int) (string, string, error) {
	addr, err := c.addr(leader)
	if err != nil {
		return "", "", err
	}
	return c.pool.ConfirmOwner(ctx, addr, topic, p)
}

func (c leaderConfirmer) ReadIndex(ctx context.Context, leader meta.Member) (uint64, error) {
	addr, err := c.addr(leader)
	if err != nil {
		return 0, err
	}
	return c.pool.ReadIndex(ctx, addr)
}

func (c leaderConfirmer) TopicIncarnation(ctx context.Context, leader meta.Member, name string) (bool, uint64, error) {
	addr, err := c.addr(leader)
	if err != nil {
		return false, 0, err
	}
	return c.pool.TopicIncarnation(ctx, addr, name)
}

// Forward carries this node's own replication writes (a partition
// leader's epoch start and in-sync changes) to the metastore leader
// (meta.Forwarder).
func (c leaderConfirmer) Forward(ctx context.Context, leader meta.Member, cmd []byte) error {
	addr, err := c.addr(leader)
	if err != nil {
		return err
	}
	return c.pool.Propose(ctx, addr, cmd)
}
