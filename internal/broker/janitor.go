package broker

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/narad-io/narad/internal/storage"
)

// The broker's background duties, each run by its own ticker (Start).

// persistFrontiers writes every moved frontier (at most every 100 ms after
// it moves), then the delivery counts that changed (at most every
// hosted.CountsEvery) — the durable pieces of queue state.
func (b *Broker) persistFrontiers() {
	for _, q := range b.parts.Queues() {
		if err := q.Persist(); err != nil {
			b.m.Errors.WithLabelValues("broker", "frontier_persist").Inc()
			b.cfg.Logger.Warn("frontier not persisted", "topic", q.Key.Topic, "partition", q.Key.Partition, "err", err)
		}
		q.PersistCounts(false)
		st := q.Table.Stats()
		lbl := []string{q.Key.Topic, partLabel(q.Key.Partition)}
		b.m.InflightMessages.WithLabelValues(lbl...).Set(float64(st.InFlight))
		b.m.AckedAheadMessages.WithLabelValues(lbl...).Set(float64(st.AckedAhead))
	}
}

// sweepExpired purges lapsed leases so redelivery happens at the
// visibility timeout even when nobody polls, and wakes long-pollers. (The
// backlog gauges have their own pass: hosted.Backlog.)
func (b *Broker) sweepExpired() {
	for _, q := range b.parts.Queues() {
		if q.Table.Expire() > 0 {
			b.topicState(q.Key.Topic).notify.Fire()
		}
	}
}

// sweepRetention applies each open log's topic retention, then refreshes
// the storage gauges (open logs only; the data directory by a stat walk).
func (b *Broker) sweepRetention() {
	topicBytes := map[string]int64{}
	for _, op := range b.parts.Open() {
		b.applyRetention(op.Topic, op.Partition, op.Log)
		st := op.Log.Stats()
		lbl := []string{op.Topic, partLabel(op.Partition)}
		b.m.PartitionSize.WithLabelValues(lbl...).Set(float64(st.SizeBytes))
		b.m.Segments.WithLabelValues(lbl...).Set(float64(st.Segments))
		topicBytes[op.Topic] += st.SizeBytes
	}
	for t, n := range topicBytes {
		b.m.TopicBytes.WithLabelValues(t).Set(float64(n))
	}
	b.gaugeDataDir()
}

func (b *Broker) gaugeDataDir() {
	var size int64
	filepath.WalkDir(b.cfg.DataDir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	b.m.DataDirSize.Set(float64(size))
	var st unix.Statfs_t
	if unix.Statfs(b.cfg.DataDir, &st) == nil {
		b.m.DataDirAvailable.Set(float64(st.Bavail) * float64(st.Bsize))
	}
}

func (b *Broker) applyRetention(topic string, p int, l *storage.Log) {
	t, ok := b.meta.Topic(topic)
	if !ok {
		return
	}
	res, err := l.ApplyRetention(t.RetentionMs)
	if err != nil {
		if !errors.Is(err, storage.ErrClosed) {
			b.m.Errors.WithLabelValues("storage", "retention").Inc()
			b.cfg.Logger.Warn("retention failed", "topic", topic, "partition", p, "err", err)
		}
		return
	}
	if res.Segments == 0 {
		return
	}
	b.m.RetentionBytes.WithLabelValues("age").Add(float64(res.Bytes))
	b.m.RetentionMessages.WithLabelValues("age").Add(float64(res.Records))
	if q := b.parts.PeekQueue(topic, p); q != nil {
		q.Table.AdvanceTo(l.Oldest())
	}
}

// evictIdle closes logs untouched for the idle period, after retention
// has deleted what it owes them.
func (b *Broker) evictIdle() {
	cutoff := b.cfg.Now().Add(-b.cfg.IdleEviction)
	for _, op := range b.parts.Open() {
		if op.LastAccess.After(cutoff) || b.roles.HostsReplica(op.Topic, op.Partition) {
			continue // a replica's role writes to or serves from its log
		}
		if q := b.parts.PeekQueue(op.Topic, op.Partition); q != nil {
			if q.Table.Stats().InFlight > 0 {
				continue // leases out: their acks and redeliveries will need the log
			}
			q.Persist()
			q.PersistCounts(true)
		}
		b.applyRetention(op.Topic, op.Partition, op.Log)
		if closed, err := b.parts.CloseIf(op.Topic, op.Partition, op.Log, op.LastAccess); closed {
			b.m.IdleLogsEvicted.Inc()
			if err != nil {
				b.cfg.Logger.Warn("idle log closed with an error", "topic", op.Topic, "partition", op.Partition, "err", err)
			}
		}
	}
}

// reconcileTopics closes logs of topics that no longer exist and deletes
// their directories once the leader confirms they are gone.
func (b *Broker) reconcileTopics() {
	if !b.meta.AppliedCaughtUp() {
		return // a lagging replica's view is not evidence of deletion
	}
	dirs, err := b.parts.TopicDirs()
	if err != nil {
		return
	}
	for _, name := range dirs {
		if _, ok := b.meta.Topic(name); ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := b.clearOrphanDir(ctx, name); err != nil {
			b.cfg.Logger.Warn("orphan topic data kept", "topic", name, "err", err)
		}
		cancel()
	}
	topics := b.meta.Topics()
	parts := 0
	for _, t := range topics {
		parts += t.Partitions
	}
	b.m.Topics.Set(float64(len(topics)))
	b.m.Partitions.Set(float64(parts))
	// A topic deleted through another node, or a gauge a loop set again
	// just after DeleteTopic forgot it, leaves no series behind.
	b.m.PruneTopics(func(name string) bool { _, ok := b.meta.Topic(name); return ok })
}

// ReconcileStartup is the boot-time sweep (docs/architecture.md, "Start and
// shutdown"): wait (bounded) for the replica to catch up, then remove topic
// directories that belong to no topic, each deletion leader-confirmed. On
// timeout the sweep is skipped, never rushed. With adopt (a lost metastore,
// recovered on the operator's word) the directories are first re-registered
// as topics; if any cannot be, the sweep is skipped so its data stays.
func (b *Broker) ReconcileStartup(ctx context.Context, adopt bool) {
	for !b.meta.AppliedCaughtUp() {
		select {
		case <-ctx.Done():
			b.cfg.Logger.Warn("startup reconcile skipped: replica not caught up")
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	if adopt {
		if _, err := b.AdoptOrphans(ctx); err != nil {
			b.cfg.Logger.Error("adopting topic data from disk: some topics were not re-registered; their data is kept and the orphan sweep skipped",
				"err", err)
			return
		}
	}
	b.reconcileTopics()
}
