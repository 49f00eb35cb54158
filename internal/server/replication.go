package server

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/meta"
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

// nodeLease is the fencing signal of replicated partitions: the
// membership's Fenced (no heartbeat answered within FenceAfter). The
// broker is built before membership (boot order), so until membership is
// set the node counts as fenced: it serves no replicated partition before
// it has heard from the cluster.
type nodeLease struct{ node atomic.Pointer[cluster.Node] }

func (l *nodeLease) set(n *cluster.Node) { l.node.Store(n) }

func (l *nodeLease) fenced() bool {
	n := l.node.Load()
	return n == nil || n.Fenced()
}

// replication builds package replica's roles for the broker's hosting
// (broker.ReplicaEngine): the leader proposes to the metastore (its
// SetInSync and StartEpoch are forwarded to the Raft leader from any
// node), the follower fetches over node RPC, both on the system clock.
type replication struct {
	self      string
	ms        *meta.Store
	transport replica.Transport
}

func newReplication(self string, ms *meta.Store, others peers) broker.ReplicaEngine {
	return replication{self: self, ms: ms, transport: fetchTransport{peers: others}}
}

func (r replication) NewLeader(l replica.Log, v replica.View, frontier func() uint64) (broker.ReplicaLeader, error) {
	return replica.NewLeader(replica.LeaderConfig{Self: r.self, View: v, Log: l, Proposer: r.ms, Clock: clock.Real, Frontier: frontier})
}

func (r replication) NewFollower(l replica.Log, v replica.View, onFrontier func(uint64)) (broker.ReplicaFollower, error) {
	return replica.NewFollower(replica.FollowerConfig{Self: r.self, View: v, Log: l, Transport: r.transport, Clock: clock.Real, OnFrontier: onFrontier})
}
