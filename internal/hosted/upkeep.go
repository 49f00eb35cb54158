package hosted

import (
	"time"

	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/storage"
)

// The hosted partitions' upkeep, run by the broker's loops: queue state
// made durable, lapsed leases purged, retention applied, idle logs closed.

// PersistQueues writes every moved frontier (at most every 100 ms after
// it moves: the broker's loop), then the delivery counts that changed (at
// most every CountsEvery) — the durable pieces of queue state — and tells
// gauge each queue's lease figures. A frontier that cannot be written is
// logged and counted; the next pass writes it.
func (s *Set) PersistQueues(gauge func(k Key, st lease.Stats)) {
	for _, q := range s.Queues() {
		if err := q.Persist(); err != nil {
			s.hook.QueueError("frontier_persist")
			s.log.Warn("frontier not persisted", "topic", q.Key.Topic, "partition", q.Key.Partition, "err", err)
		}
		q.PersistCounts(false)
		gauge(q.Key, q.Table.Stats())
	}
}

// ExpireLeases purges lapsed leases, so redelivery happens at the
// visibility timeout even when nobody polls, and tells wake each topic
// with records available again.
func (s *Set) ExpireLeases(wake func(topic string)) {
	for _, q := range s.Queues() {
		if q.Table.Expire()+q.sched.Due.Expire() > 0 {
			wake(q.Key.Topic)
		}
	}
}

// Retain applies a retention of retentionMs to an open log, and moves the
// partition's queue past what it deleted.
func (s *Set) Retain(op OpenPartition, retentionMs int64) (storage.RetentionResult, error) {
	res, err := op.Log.ApplyRetention(retentionMs)
	if err != nil || res.Segments == 0 {
		return res, err
	}
	if q := s.PeekQueue(op.Topic, op.Partition); q != nil {
		q.Table.AdvanceTo(op.Log.Oldest())
	}
	return res, nil
}

// EvictIdle closes the logs untouched since cutoff, except those keep
// names (a log a replica role writes to or serves from) and those with
// leases out (their acks and redeliveries will need the log). Before a
// log closes, its queue state is written and retain runs on it. It
// returns how many logs it closed.
func (s *Set) EvictIdle(cutoff time.Time, keep func(topic string, p int) bool, retain func(OpenPartition)) int {
	closed := 0
	for _, op := range s.Open() {
		if op.LastAccess.After(cutoff) || keep(op.Topic, op.Partition) {
			continue
		}
		if q := s.PeekQueue(op.Topic, op.Partition); q != nil {
			if q.Table.Stats().InFlight > 0 {
				continue
			}
			q.Persist()
			q.PersistCounts(true)
		}
		retain(op)
		ok, err := s.CloseIf(op.Topic, op.Partition, op.Log, op.LastAccess)
		if ok {
			closed++
			if err != nil {
				s.log.Warn("idle log closed with an error", "topic", op.Topic, "partition", op.Partition, "err", err)
			}
		}
	}
	return closed
}
