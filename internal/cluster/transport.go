package cluster

import (
	"context"
	"errors"

	"github.com/narad-io/narad/internal/meta"
)

// Transport is what membership needs of node RPC: asking a peer to admit
// this node, and telling the leader it lives. Members travel as their
// addresses (ID, RaftAddr, RPCAddr, HTTPAddr); the rest of a member
// record is the controller's. The server adapts the RPC pool to it.
type Transport interface {
	Join(ctx context.Context, addr string, m meta.Member) (JoinResult, error)
	// Heartbeat carries the leaders this node's followers have not
	// reached (unreachable.go).
	Heartbeat(ctx context.Context, addr string, m meta.Member, reports []LeaderReport) error
}

// JoinResult answers a join. Not admitted with a leader named means "ask
// there"; not admitted without one means "no leader yet, ask again later".
type JoinResult struct {
	Admitted      bool
	LeaderID      string
	LeaderRPCAddr string
}

// ErrNotLeader is a leader-only call (a heartbeat) that reached a
// follower: the caller asks again, of the leader.
var ErrNotLeader = errors.New("not the leader")
