package broker

import (
	"context"
	"sync"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/topic"
)

// Placer decides the owners of partitions [from, to) of a topic; parent is
// the parent's name for a child created with it (anti-affinity), else "".
// On a single node every partition is this node's; a cluster sets the
// controller's placement (cluster.Assign) with SetPlacer.
type Placer func(topic string, from, to int, parent string) []meta.Assignment

// PartitionReport describes a partition as its owner reports it (node RPC
// Stats): never by opening a log (topic.PartitionReport).
type PartitionReport = topic.PartitionReport

// CursorPosition is a fan-out cursor's place on a parent partition.
type CursorPosition = topic.CursorPosition

// StatsFunc asks a partition owner for reports (nil on a single node);
// exact asks for exact tails (see LocalReports).
type StatsFunc func(ctx context.Context, owner, topic string, parts []int, exact bool) ([]PartitionReport, error)

type clusterHooks struct {
	mu     sync.RWMutex
	placer Placer
	stats  StatsFunc
}

// SetPlacer installs the cluster's placement.
func (b *Broker) SetPlacer(p Placer) {
	b.hooks.mu.Lock()
	b.hooks.placer = p
	b.hooks.mu.Unlock()
}

// SetStatsFunc installs the remote stats call.
func (b *Broker) SetStatsFunc(f StatsFunc) {
	b.hooks.mu.Lock()
	b.hooks.stats = f
	b.hooks.mu.Unlock()
}

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
	b.hooks.mu.RLock()
	f := b.hooks.stats
	b.hooks.mu.RUnlock()
	if f == nil {
		return nil, nil
	}
	return f(ctx, owner, topic, parts, exact)
}

// LocalReports describes partitions this node owns, for a Stats call,
// without opening a log — unless exact: a closed log whose directory has
// no clean tail (after a crash) is then opened to read it, exactly as
// CommittedHWM does for a local attach, so an attach point is measured
// the same whichever node asks.
func (b *Broker) LocalReports(topic string, parts []int, exact bool) []PartitionReport {
	out := make([]PartitionReport, len(parts))
	for i, p := range parts {
		out[i] = PartitionReport{Partition: p}
		if !b.owned(topic, p) {
			continue
		}
		st, err := b.reg.Describe(topic, p)
		if err != nil {
			continue
		}
		if exact && !st.Exact {
			l, err := b.reg.Get(topic, p)
			if err != nil {
				continue
			}
			st = l.Stats()
		}
		out[i].Available, out[i].Stats, out[i].Frontier = true, st, b.frontierOf(topic, p)
	}
	return out
}
