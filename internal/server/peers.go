package server

import (
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/rpc"
)

// peers reaches other members over node RPC: a member's id becomes its
// node-RPC address from this replica's member records. Every adapter that
// calls another node goes through it.
type peers struct {
	dir  cluster.Directory
	pool *rpc.Pool
}

// addr is node's node-RPC address, or the leader's when node is "". No
// known address is a 503: the records arrive with the member's first
// heartbeat, so asking again shortly is the cure.
func (p peers) addr(node string) (string, error) {
	if node == "" {
		if a := p.dir.LeaderRPC(); a != "" {
			return a, nil
		}
		return "", apierr.Unavailable(time.Second, "no Raft leader known")
	}
	if a, ok := p.dir.RPCAddrOf(node); ok {
		return a, nil
	}
	return "", apierr.Unavailable(time.Second, "node %q has no known address", node)
}
