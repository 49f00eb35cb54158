package broker

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

// Purge (docs/concepts.md, "Redrive and purge") settles every record below a
// partition's high watermark at the moment of the call: the frontier moves
// to it, leases on those records end (their acks, extends and nacks answer
// 410 like any stale handle's) and their delivery counts are dropped. It
// changes queue state only — never the log, so replay and fan-out children
// see every record as before.
//
// It is durable before it answers: the frontier (and the hwm file before
// it) is written at once, not on the sweep, so a crash after a 200 cannot
// bring the purged records back. A partition being moved refuses it like a
// commit (the freeze waits for a purge in flight to end, then the copy
// carries the frontier it wrote), so a purge is never lost in a move.

// Purge purges partitions parts of topic on this node — every partition
// of it this node owns when parts is nil — and returns how many records
// it settled that were not settled before (a second purge answers 0).
// Authorization is the caller's (owner or admin).
func (b *Broker) Purge(ctx context.Context, topic string, parts []int) (uint64, error) {
	t, err := b.topic(topic)
	if err != nil {
		return 0, err
	}
	if parts == nil {
		for p := range t.Partitions {
			if b.owned(t.Name, p) {
				parts = append(parts, p)
			}
		}
	}
	for _, p := range parts {
		if p < 0 || p >= t.Partitions {
			return 0, refusal.New(refusal.ErrPartitionRange, 0, "partition %d is out of range: %q has %d partitions", p, t.Name, t.Partitions)
		}
		if err := b.servedHere(t, p); err != nil {
			return 0, err
		}
	}
	var total uint64
	defer func() {
		if total > 0 {
			b.m.PurgedMessages.WithLabelValues(t.Name).Add(float64(total))
		}
	}()
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := b.purgePartition(t, p)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (b *Broker) purgePartition(t meta.Topic, p int) (uint64, error) {
	done, err := b.enterCommit(t.Name, p)
	if err != nil {
		return 0, err
	}
	defer done()
	l, err := b.parts.Get(t.Name, p)
	if err != nil {
		return 0, err
	}
	q, err := b.queue(t, p)
	if err != nil {
		return 0, err
	}
	// Records retention deleted already are retention's, not this purge's.
	q.Table.AdvanceTo(l.Oldest())
	n := q.Table.PurgeTo(l.HWM())
	// Scheduled records go with the rest, due or not.
	sn, err := q.PurgeSchedule()
	n += uint64(sn)
	if err != nil {
		b.m.Errors.WithLabelValues("broker", "schedule_purge").Inc()
		return n, refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q is purged but its schedule could not be cleared yet; retry the purge", p, t.Name)
	}
	if err := q.Persist(); err != nil {
		b.m.Errors.WithLabelValues("broker", "frontier_persist").Inc()
		b.cfg.Logger.Warn("purged frontier not persisted", "topic", t.Name, "partition", p, "err", err)
		return n, refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q is purged but its frontier could not be made durable yet; retry the purge", p, t.Name)
	}
	q.PersistCounts(true)
	return n, nil
}
