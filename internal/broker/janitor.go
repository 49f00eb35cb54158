package broker

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/storage"
)

// The broker's background duties, each run by its own ticker (Start).

// upkeep is the duties over the hosted partitions (their queue state,
// lapsed leases, retention, idle logs) and the storage gauges they set.
type upkeep struct {
	cfg   *Config
	meta  *meta.Store
	m     *metrics.Metrics
	parts *hosted.Set
	roles *hosted.Roles
	wake  func(topic string)
}

// persistFrontiers writes every moved frontier, then the changed delivery
// counts (hosted.Set.PersistQueues), and sets the lease gauges.
func (u *upkeep) persistFrontiers() {
	u.parts.PersistQueues(func(k hosted.Key, st lease.Stats) {
		lbl := []string{k.Topic, partLabel(k.Partition)}
		u.m.InflightMessages.WithLabelValues(lbl...).Set(float64(st.InFlight))
		u.m.AckedAheadMessages.WithLabelValues(lbl...).Set(float64(st.AckedAhead))
	})
	// Scheduled records per topic: a topic's series appears once one of
	// its queues here ever held one, and then follows it to zero.
	scheduled := map[string]int{}
	for _, q := range u.parts.Queues() {
		if q.EverScheduled() {
			scheduled[q.Key.Topic] += q.Scheduled()
		}
	}
	for topic, n := range scheduled {
		u.m.Scheduled.WithLabelValues(topic).Set(float64(n))
	}
}

// sweepExpired purges lapsed leases and wakes the long polls of their
// topics (hosted.Set.ExpireLeases). The backlog gauges have their own
// pass (hosted.Backlog).
func (u *upkeep) sweepExpired() { u.parts.ExpireLeases(u.wake) }

// sweepRetention applies each open log's topic retention, then refreshes
// the storage gauges (open logs only; the data directory by a stat walk).
func (u *upkeep) sweepRetention() {
	topicBytes := map[string]int64{}
	for _, op := range u.parts.Open() {
		u.retain(op)
		st := op.Log.Stats()
		lbl := []string{op.Topic, partLabel(op.Partition)}
		u.m.PartitionSize.WithLabelValues(lbl...).Set(float64(st.SizeBytes))
		u.m.Segments.WithLabelValues(lbl...).Set(float64(st.Segments))
		topicBytes[op.Topic] += st.SizeBytes
	}
	for t, n := range topicBytes {
		u.m.TopicBytes.WithLabelValues(t).Set(float64(n))
	}
	gaugeDataDir(u.cfg.DataDir, u.m)
}

// gaugeDataDir sets the data directory's size and the space left on its
// disk.
func gaugeDataDir(dataDir string, m *metrics.Metrics) {
	var size int64
	filepath.WalkDir(dataDir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	m.DataDirSize.Set(float64(size))
	var st unix.Statfs_t
	if unix.Statfs(dataDir, &st) == nil {
		m.DataDirAvailable.Set(float64(st.Bavail) * float64(st.Bsize))
	}
}

// retain applies the topic's retention to one open log
// (hosted.Set.Retain) and counts what it deleted.
func (u *upkeep) retain(op hosted.OpenPartition) {
	t, ok := u.meta.Topic(op.Topic)
	if !ok {
		return
	}
	res, err := u.parts.Retain(op, t.RetentionMs)
	if err != nil {
		if !errors.Is(err, storage.ErrClosed) {
			u.m.Errors.WithLabelValues("storage", "retention").Inc()
			u.cfg.Logger.Warn("retention failed", "topic", op.Topic, "partition", op.Partition, "err", err)
		}
		return
	}
	if res.Segments > 0 {
		u.m.RetentionBytes.WithLabelValues("age").Add(float64(res.Bytes))
		u.m.RetentionMessages.WithLabelValues("age").Add(float64(res.Records))
	}
}

// evictIdle closes logs untouched for the idle period (hosted.Set.EvictIdle),
// after retention has deleted what it owes them; a replica's role writes
// to or serves from its log, so its log stays.
func (u *upkeep) evictIdle() {
	n := u.parts.EvictIdle(u.cfg.Now().Add(-u.cfg.IdleEviction), u.roles.HostsReplica, u.retain)
	u.m.IdleLogsEvicted.Add(float64(n))
}

// reconcileTopics is the periodic orphan sweep (sweepOrphans), once the
// startup reconcile has opened the create gate.
func (a *admin) reconcileTopics() {
	if !a.createOpen.Load() {
		// Not before the startup reconcile (ReconcileStartup) has run, as
		// the create gate opens after it: with recovery.orphan_data=adopt
		// this sweep would otherwise delete the data the startup is about
		// to adopt, whenever the node takes longer than a tick to elect.
		return
	}
	a.sweepOrphans()
}

// sweepOrphans closes logs of topics that no longer exist and deletes
// their directories once the leader confirms they are gone.
func (a *admin) sweepOrphans() {
	if !a.meta.AppliedCaughtUp() {
		return // a lagging replica's view is not evidence of deletion
	}
	dirs, err := a.parts.TopicDirs()
	if err != nil {
		return
	}
	for _, name := range dirs {
		if _, ok := a.meta.Topic(name); ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := a.clearOrphanDir(ctx, name); err != nil {
			a.cfg.Logger.Warn("orphan topic data kept", "topic", name, "err", err)
		}
		cancel()
	}
	topics := a.meta.Topics()
	parts := 0
	for _, t := range topics {
		parts += t.Partitions
	}
	a.m.Topics.Set(float64(len(topics)))
	a.m.Partitions.Set(float64(parts))
	// A topic deleted through another node, or a gauge a loop set again
	// just after DeleteTopic forgot it, leaves no series behind.
	a.m.PruneTopics(func(name string) bool { _, ok := a.meta.Topic(name); return ok })
}

// ReconcileStartup is the boot-time sweep (docs/architecture.md, "Start and
// shutdown"): wait (bounded) for the replica to catch up, then remove topic
// directories that belong to no topic, each deletion leader-confirmed. On
// timeout the sweep is skipped, never rushed. With adopt (a lost metastore,
// recovered on the operator's word) the directories are first re-registered
// as topics; if any cannot be, the sweep is skipped so its data stays.
func (a *admin) ReconcileStartup(ctx context.Context, adopt bool) {
	for !a.meta.AppliedCaughtUp() {
		select {
		case <-ctx.Done():
			a.cfg.Logger.Warn("startup reconcile skipped: replica not caught up")
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	if adopt {
		if _, err := a.AdoptOrphans(ctx); err != nil {
			a.cfg.Logger.Error("adopting topic data from disk: some topics were not re-registered; their data is kept and the orphan sweep skipped",
				"err", err)
			return
		}
	}
	a.sweepOrphans()
}
