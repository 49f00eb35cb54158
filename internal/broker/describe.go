package broker

import (
	"context"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
)

// PartitionStats is one entry of partition_stats (topic.PartitionStats).
type PartitionStats = topic.PartitionStats

// DescribeTopic returns the topic with partition_stats. It never opens a
// partition log: open logs are read through Peek, closed ones from their
// directory, and frontiers from memory or the frontier file.
func (b *Broker) DescribeTopic(name string) (TopicView, error) {
	t, err := b.topic(name)
	if err != nil {
		return TopicView{}, err
	}
	v := b.view(t)
	v.PartitionStats = make([]PartitionStats, t.Partitions)
	remote := map[string][]int{}
	for p := 0; p < t.Partitions; p++ {
		v.PartitionStats[p] = b.partitionStats(t, p)
		if owner := v.PartitionStats[p].OwnerNode; owner != b.cfg.NodeID && owner != "" {
			remote[owner] = append(remote[owner], p)
		}
	}
	// Remote owners answer concurrently; one that cannot is listed with
	// "available": false and no figures, not dropped.
	var wg sync.WaitGroup
	for owner, parts := range remote {
		wg.Add(1)
		go func(owner string, parts []int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			reps, err := b.RemoteStats(ctx, owner, t.Name, parts)
			if err != nil {
				return
			}
			for _, r := range reps {
				if r.Partition >= 0 && r.Partition < len(v.PartitionStats) && r.Available {
					fill(&v.PartitionStats[r.Partition], r.Stats, r.Frontier)
					fillQueue(&v.PartitionStats[r.Partition], r.InFlight, r.OldestUnconsumedAt)
					v.PartitionStats[r.Partition].CommitStall = r.CommitStall
				}
			}
		}(owner, parts)
	}
	wg.Wait()
	return v, nil
}

func fill(ps *PartitionStats, st storage.Stats, frontier uint64) {
	ps.Available = nil
	ps.Segments = &st.Segments
	ps.OldestOffset = &st.OldestOffset
	ps.NextOffset = &st.HighWatermark
	ps.HighWatermark = &st.HighWatermark
	ps.SizeBytes = &st.SizeBytes
	ps.OldestSegmentAt = &st.OldestSegmentAt
	ps.ConsumerFrontier = &frontier
}

func fillQueue(ps *PartitionStats, inFlight int, oldestUnconsumedAt int64) {
	ps.InFlight = &inFlight
	if oldestUnconsumedAt > 0 {
		ps.OldestUnconsumedAt = &oldestUnconsumedAt
	}
}

// queueFigures are a local partition's in-flight count (its lease table's
// live leases; 0 when the queue is not loaded, for then nothing is leased)
// and the commit time of its oldest unsettled record, the one at the
// frontier or, past retention, the oldest retained (0 when none is, or
// when the log is closed and no backlog pass read it: describe never
// opens a log to say, hosted.Backlog).
func (b *Broker) queueFigures(topic string, incarnation uint64, p int, frontier, oldest uint64) (inFlight int, oldestUnconsumedAt int64) {
	if q := b.parts.PeekQueue(topic, p); q != nil {
		inFlight = q.Table.Stats().InFlight
	}
	return inFlight, b.backlog.OldestUnsettledAt(hosted.Key{Topic: topic, Partition: p}, incarnation, max(frontier, oldest), false)
}

func (b *Broker) partitionStats(t meta.Topic, p int) PartitionStats {
	owner, _ := b.meta.Owner(t.Name, p)
	ps := PartitionStats{Index: p, OwnerNode: owner}
	ps.Replicas, ps.InSync = b.roles.ReplicaInfo(t, p)
	unavailable := func() PartitionStats {
		f := false
		ps.Available = &f
		return ps
	}
	if owner != b.cfg.NodeID {
		return unavailable() // remote stats arrive with the cluster's node RPC
	}
	st, err := b.parts.Describe(t.Name, p)
	if err != nil {
		return unavailable()
	}
	frontier, err := b.parts.Frontier(t.Name, p)
	if err != nil {
		return unavailable()
	}
	fill(&ps, st, frontier)
	inFlight, oldestAt := b.queueFigures(t.Name, t.Incarnation, p, frontier, st.OldestOffset)
	fillQueue(&ps, inFlight, oldestAt)
	if q := b.parts.PeekQueue(t.Name, p); q != nil {
		if n := q.Scheduled(); n > 0 {
			ps.Scheduled = &n
		}
	}
	ps.CommitStall = b.roles.CommitStall(t.Name, p)
	if ps.Error = b.parts.Unavailable(t.Name, p); ps.Error != "" {
		f := false
		ps.Available = &f
	}
	return ps
}
