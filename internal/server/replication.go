package server

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
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
// (hosted.ReplicaEngine): the leader proposes to the metastore (its
// SetInSync and StartEpoch are forwarded to the Raft leader from any
// node), the follower fetches over node RPC, both on the system clock.
type replication struct {
	log       *slog.Logger
	m         *metrics.Metrics
	self      string
	disk      string // this node's disk id, named in every fetch
	ms        *meta.Store
	transport replica.Transport
}

func newReplication(self, disk string, ms *meta.Store, others peers, m *metrics.Metrics, log *slog.Logger) hosted.ReplicaEngine {
	return replication{log: log, m: m, self: self, disk: disk, ms: ms, transport: fetchTransport{peers: others}}
}

func (r replication) NewLeader(l replica.Log, v replica.View, frontier func() uint64, state func() replica.SideState) (hosted.ReplicaLeader, error) {
	return replica.NewLeader(replica.LeaderConfig{Self: r.self, View: v, Log: l, Proposer: boundedProposer{r.ms, r.log}, Clock: clock.Real,
		Frontier: frontier, State: state})
}

func (r replication) NewFollower(l replica.Log, v replica.View, onFrontier func(uint64), onState func(replica.SideState) error) (hosted.ReplicaFollower, error) {
	part := strconv.Itoa(v.Partition)
	return replica.NewFollower(replica.FollowerConfig{Self: r.self, DiskID: r.disk, View: v, Log: l, Transport: r.transport, Clock: clock.Real,
		OnFrontier: onFrontier, OnState: onState, Logger: r.log,
		OnAppendFailure: func(reason string) { r.m.ReplicaAppendFailures.WithLabelValues(v.Topic, part, reason).Inc() }})
}

// proposeBound bounds one replication proposal. The leader proposes its
// epoch start (or renewal) once at Start and again each second until it
// is recorded,
// so a proposal that cannot finish (forwarded to a metastore leader that
// just died) must give up soon, or the retry — and the takeover — waits
// for the forward's own long timeout.
const proposeBound = 2 * time.Second

type boundedProposer struct {
	ms  *meta.Store
	log *slog.Logger
}

func (p boundedProposer) SetInSync(ctx context.Context, c meta.SetInSyncCmd) error {
	ctx, cancel := context.WithTimeout(ctx, proposeBound)
	defer cancel()
	err := p.ms.SetInSync(ctx, c)
	if err != nil {
		p.log.Warn("in-sync change not recorded; the leader decides again on its next view", "topic", c.Topic, "partition", c.Partition,
			"epoch", c.Epoch, "in_sync", c.InSync, "from", c.From, "err", err)
	}
	return err
}

func (p boundedProposer) RenewEpoch(ctx context.Context, topic string, partition int, epoch uint64, leader string) error {
	ctx, cancel := context.WithTimeout(ctx, proposeBound)
	defer cancel()
	err := p.ms.RenewEpoch(ctx, topic, partition, epoch, leader)
	if err != nil {
		p.log.Warn("epoch renewal not recorded; the leader proposes it again", "topic", topic, "partition", partition, "epoch", epoch, "err", err)
	}
	return err
}

func (p boundedProposer) StartEpoch(ctx context.Context, topic string, partition int, epoch uint64, leader string, offset uint64) error {
	ctx, cancel := context.WithTimeout(ctx, proposeBound)
	defer cancel()
	err := p.ms.StartEpoch(ctx, topic, partition, epoch, leader, offset)
	if err != nil {
		p.log.Warn("epoch start not recorded; the leader proposes it again", "topic", topic, "partition", partition, "epoch", epoch, "offset", offset, "err", err)
	}
	return err
}
