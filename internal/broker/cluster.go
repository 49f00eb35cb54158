package broker

import (
	"context"

	"github.com/narad-io/narad/internal/hosted"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
)

// Placer decides the replicas of partitions [from, to) of a topic with rf
// copies each; parent is the parent's name for a child created with it
// (anti-affinity), else "". Nil (a single node): every partition is this
// node's; a cluster gives the controller's placement (cluster.Placement)
// in Config.Placer.
type Placer func(topic string, from, to, rf int, parent string) []meta.Assignment

// PartitionReport describes a partition as its owner reports it (node RPC
// Stats): never by opening a log (topic.PartitionReport).
type PartitionReport = topic.PartitionReport

// CursorPosition is a fan-out cursor's place on a parent partition.
type CursorPosition = topic.CursorPosition

// StatsFunc asks a partition owner for reports (Config.RemoteStats; nil
// on a single node); exact asks for exact tails (see LocalReports).
type StatsFunc func(ctx context.Context, owner, topic string, parts []int, exact bool) ([]PartitionReport, error)

// RemoteStats asks owner for reports of topic's partitions, never opening
// a log there; nil when no cluster transport is set.
func (b *Broker) RemoteStats(ctx context.Context, owner, topic string, parts []int) ([]PartitionReport, error) {
	return b.remoteStats(ctx, owner, topic, parts, false)
}

// RemoteTails is RemoteStats with exact tails: what an attach point needs,
// the owner opening a log whose directory cannot say (LocalReports).
func (b *Broker) RemoteTails(ctx context.Context, owner, topic string, parts []int) ([]PartitionReport, error) {
	return b.remoteStats(ctx, owner, topic, parts, true)
}

func (b *Broker) remoteStats(ctx context.Context, owner, topic string, parts []int, exact bool) ([]PartitionReport, error) {
	if b.cfg.RemoteStats == nil {
		return nil, nil
	}
	return b.cfg.RemoteStats(ctx, owner, topic, parts, exact)
}

// LocalReports describes partitions this node owns, for a Stats call,
// without opening a log — unless exact: a closed log whose directory has
// no clean tail (after a crash) is then opened to read it, exactly as
// CommittedHWM does for a local attach, so an attach point is measured
// the same whichever node asks.
func (b *Broker) LocalReports(topic string, parts []int, exact bool) []PartitionReport {
	out := make([]PartitionReport, len(parts))
	t, _ := b.meta.Topic(topic)
	for i, p := range parts {
		out[i] = PartitionReport{Partition: p}
		if !b.owned(topic, p) {
			continue
		}
		st, err := b.parts.Describe(topic, p)
		if err != nil {
			continue
		}
		if exact && !st.Exact {
			l, err := b.parts.Get(topic, p)
			if err != nil {
				continue
			}
			st = l.Stats()
		}
		frontier, err := b.parts.Frontier(topic, p)
		if err != nil {
			continue // reported unavailable: no frontier to vouch for
		}
		out[i].Available, out[i].Stats, out[i].Frontier = true, st, frontier
		out[i].InFlight, out[i].OldestUnconsumedAt = b.queueFigures(topic, t.Incarnation, p, out[i].Frontier, st.OldestOffset)
		out[i].CommitStall = b.roles.CommitStall(topic, p)
	}
	return out
}

// CommitRouted commits a batch another node routed here. That node saw the
// topic and this partition's owner at metaVersion (0: unknown); this
// replica may trail the leader by a few milliseconds (a topic created a
// moment ago), so it first waits until it applied that version — at most
// meta.CatchUpBound — rather than answer 404 or "not the owner" and send
// the batch into the sender's retry backoff. Past the bound the replica is
// behind for a reason (cut off from the leader) and the commit answers
// from what it knows.
func (b *Broker) CommitRouted(ctx context.Context, topic string, incarnation uint64, p int, recs []storage.Record, metaVersion uint64) error {
	if metaVersion > 0 {
		b.meta.WaitVersionWithin(ctx, metaVersion, meta.CatchUpBound)
	}
	return b.commitHere(ctx, topic, incarnation, p, recs)
}

// OwnerReports is LocalReports for another node's Stats call. The caller
// saw the topic and its placement, perhaps a moment ago (create-as-child
// asks for attach points at once): if this replica has not, it catches up
// with the leader first, briefly (meta.Store.CatchUpUnlessKnown).
func (b *Broker) OwnerReports(ctx context.Context, topic string, parts []int, exact bool) ([]PartitionReport, error) {
	if err := ValidateTopicName(topic); err != nil {
		return nil, err
	}
	b.meta.CatchUpUnlessKnown(ctx, topic, parts...)
	return b.LocalReports(topic, parts, exact), nil
}

// UnreachableLeaders lists the replicated partitions followed here whose
// leader the follower's fetches have not reached (hosted.Roles): the
// node's heartbeat reports them to the controller.
func (b *Broker) UnreachableLeaders() []hosted.UnreachableLeader { return b.roles.Unreachable() }
