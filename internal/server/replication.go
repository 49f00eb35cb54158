package server

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/rpc"
)

// fetchTransport is replica.Transport over node RPC: a follower's fetch
// goes to its leader's node-RPC address. Refusals come back typed (stale
// epoch, not leader, not ready), as the leader's broker returned them.
type fetchTransport struct{ peers peers }

func (f fetchTransport) Fetch(ctx context.Context, leader string, req replica.FetchRequest) (replica.FetchResponse, error) {
	if leader == "" { // peers.addr("") is the Raft leader's: never the partition's
		return replica.FetchResponse{}, refusal.New(refusal.ErrNotLeader, time.Second, "partition %d of %q has no leader", req.Partition, req.Topic)
	}
	addr, err := f.peers.addr(leader)
	if err != nil {
		return replica.FetchResponse{}, err
	}
	resp, err := f.peers.pool.Fetch(ctx, addr, rpc.FetchRequest(req))
	return replica.FetchResponse(resp), err
}

var _ replica.Transport = fetchTransport{}
