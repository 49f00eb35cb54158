package broker

import (
	"context"
	"errors"
	"math"
	"sort"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// MaxConsumeBatch bounds max=N (02-http-api.md).
const MaxConsumeBatch = 1000

// ConsumeRequest is a queue consume or, with Offset, a replay.
type ConsumeRequest struct {
	Topic     string
	Partition *int
	Offset    *uint64 // replay: needs Partition
	Max       int     // 0: one record
	Wait      time.Duration
}

// Message is one delivered or replayed record. Key and Payload may alias
// the log's decoded frames: read-only.
type Message struct {
	Topic         string
	Partition     int
	Offset        uint64
	Key           []byte
	Payload       []byte
	CommittedAt   int64 // unix ms
	ReceiptHandle string
	DeliveryCount int
}

// Consume leases up to max(1, Max) records, or replays from Offset. With
// nothing available it long-polls up to Wait (capped by the server) on
// the topic's broadcast, then returns no messages (204 upstream).
func (b *Broker) Consume(ctx context.Context, req ConsumeRequest) ([]Message, error) {
	t, err := b.topic(req.Topic)
	if err != nil {
		return nil, err
	}
	if req.Max < 0 || req.Max > MaxConsumeBatch {
		return nil, apierr.BadRequest("max must be 1..%d, got %d", MaxConsumeBatch, req.Max)
	}
	if req.Wait < 0 {
		return nil, apierr.BadRequest("wait must not be negative")
	}
	if req.Partition != nil && (*req.Partition < 0 || *req.Partition >= t.Partitions) {
		return nil, apierr.BadRequest("partition %d is out of range: %q has %d partitions", *req.Partition, t.Name, t.Partitions)
	}
	if req.Offset != nil && req.Partition == nil {
		return nil, apierr.BadRequest("offset needs partition (replay reads one partition by position)")
	}
	want := max(req.Max, 1)
	wait := min(req.Wait, b.cfg.MaxConsumeWait)
	var parts []int
	if req.Partition != nil {
		if !b.owned(t.Name, *req.Partition) {
			return nil, apierr.Unavailable(time.Second, "partition %d of %q is not served by this node", *req.Partition, t.Name)
		}
		parts = []int{*req.Partition}
	}
	ts := b.topicState(t.Name)
	start := time.Now()
	deadline := start.Add(wait)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		ch := ts.notify.Wait() // taken before the check: a commit that races it still wakes us
		var msgs []Message
		if req.Offset != nil {
			msgs, err = b.replay(t, *req.Partition, *req.Offset, want)
		} else {
			if parts == nil || req.Partition == nil {
				parts = b.ownedPartitions(t, ts)
			}
			msgs, err = b.lease(t, parts, want)
		}
		if err != nil || len(msgs) > 0 {
			b.m.ConsumeWait.Observe(time.Since(start).Seconds())
			return msgs, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			b.m.ConsumeEmpty.Inc()
			b.m.ConsumeWait.Observe(time.Since(start).Seconds())
			return nil, nil
		}
		if timer == nil {
			timer = time.NewTimer(left)
		}
		select {
		case <-ch:
		case <-timer.C:
		case <-ctx.Done():
			return nil, nil
		}
		if t, err = b.topic(req.Topic); err != nil {
			return nil, err // deleted while we waited
		}
	}
}

// WaitTopic parks until topic's broadcast fires here — a commit, a lease
// expiry or a nack on a partition this node serves — or wait (capped like
// a consume's) ends, and reports whether it was woken. It leases nothing,
// so the caller may abandon it at any moment: it is what another node's
// unpinned long-poll parks on (node RPC Wait).
func (b *Broker) WaitTopic(ctx context.Context, topic string, wait time.Duration) (bool, error) {
	if _, err := b.topic(topic); err != nil {
		return false, err
	}
	ch := b.topicState(topic).notify.Wait()
	t := time.NewTimer(min(wait, b.cfg.MaxConsumeWait))
	defer t.Stop()
	select {
	case <-ch:
		return true, nil
	case <-t.C:
	case <-ctx.Done():
	}
	return false, nil
}

// ownedPartitions lists the partitions this node serves, starting at a
// rotating index so that no partition starves.
func (b *Broker) ownedPartitions(t meta.Topic, ts *topicState) []int {
	n := t.Partitions
	first := int(ts.consume.Add(1) % uint64(n))
	out := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if p := (first + i) % n; b.owned(t.Name, p) {
			out = append(out, p)
		}
	}
	return out
}

// lease reserves and reads up to want records across parts. A partition
// that cannot serve (its 503 names why) fails a consume pinned to it; an
// unpinned one passes it by and takes records from the others (the
// describe, the log and errors_total report the broken partition).
func (b *Broker) lease(t meta.Topic, parts []int, want int) ([]Message, error) {
	var out []Message
	for _, p := range parts {
		if len(out) >= want {
			break
		}
		q, err := b.queue(t, p)
		if err == nil {
			var l *storage.Log
			if l, err = b.logWithWork(t.Name, p, q); err == nil && l != nil {
				out, err = b.leaseFrom(t, q, l, out, want)
			}
		}
		if err != nil && len(parts) == 1 {
			return out, err
		}
	}
	bytes := 0
	for _, m := range out {
		bytes += len(m.Payload)
	}
	if len(out) > 0 {
		b.m.MessagesConsumed.WithLabelValues(t.Name).Add(float64(len(out)))
		b.m.BytesConsumed.Add(float64(bytes))
	}
	return out, nil
}

// leaseFrom reserves and reads records of one partition into out. A read
// that only stepped over unreadable records (settled as skipped) reserves
// again: a gap is not the end of the partition.
func (b *Broker) leaseFrom(t meta.Topic, q *queue, l *storage.Log, out []Message, want int) ([]Message, error) {
	for {
		if oldest := l.Oldest(); q.table.Frontier() < oldest {
			q.table.AdvanceTo(oldest)
		}
		leases := q.table.Reserve(l.HWM(), want-len(out))
		if len(leases) == 0 {
			return out, nil
		}
		got, skipped, err := b.readLeased(t.Name, q, l, leases)
		out = append(out, got...)
		if err != nil || len(got) > 0 || !skipped {
			return out, err
		}
	}
}

// logWithWork returns the partition's log if there may be something to
// deliver. A closed log whose directory shows nothing past the frontier
// stays closed: an idle consumer must not keep (or make) logs open.
func (b *Broker) logWithWork(topic string, p int, q *queue) (*storage.Log, error) {
	if b.reg.Peek(topic, p) == nil && q.table.Stats().InFlight == 0 {
		st, err := b.reg.Describe(topic, p)
		if err == nil && st.Exact && st.HighWatermark <= q.table.Frontier() {
			return nil, nil
		}
	}
	return b.reg.Get(topic, p)
}

// readLeased reads the records of freshly reserved leases. Reserve first,
// then read: a lease whose record turns out unreadable is marked skipped
// (recorded loss), one below retention is dropped by moving the frontier,
// and one that cannot be read for another reason is released.
func (b *Broker) readLeased(topic string, q *queue, l *storage.Log, leases []lease.Lease) (out []Message, skipped bool, err error) {
	sort.Slice(leases, func(i, j int) bool { return leases[i].Offset < leases[j].Offset })
	out = make([]Message, 0, len(leases))
	for i := 0; i < len(leases); {
		// A run of consecutive offsets is one read.
		j := i + 1
		for j < len(leases) && leases[j].Offset == leases[j-1].Offset+1 {
			j++
		}
		run := leases[i:j]
		res, err := l.Read(run[0].Offset, len(run), math.MaxInt, storage.NoDueLimit)
		var below *storage.BelowOldestError
		switch {
		case errors.As(err, &below):
			q.table.AdvanceTo(below.Oldest) // drops the leases under it
			run = run[:0]
		case err != nil:
			for _, ls := range leases[i:] {
				q.table.Release(ls.Offset, ls.Nonce)
			}
			return out, skipped, err
		case res.Skipped > 0:
			q.table.MarkSkipped(res.SkippedFrom, res.SkippedFrom+res.Skipped)
			skipped = true
		}
		k := 0
		for _, r := range res.Records {
			for k < len(run) && run[k].Offset < r.Offset {
				q.table.Release(run[k].Offset, run[k].Nonce)
				k++
			}
			if k < len(run) && run[k].Offset == r.Offset {
				ls := run[k]
				out = append(out, Message{Topic: topic, Partition: ls.Partition, Offset: r.Offset,
					Key: r.Key, Payload: r.Payload, CommittedAt: r.CommittedAt,
					ReceiptHandle: ls.Handle(), DeliveryCount: ls.DeliveryCount})
				k++
			}
		}
		// Leases the read did not reach go back; the next consume takes
		// them again. (Those MarkSkipped settled are gone already, and
		// their Release is a harmless no-op.)
		for ; k < len(run); k++ {
			q.table.Release(run[k].Offset, run[k].Nonce)
		}
		i = j
	}
	return out, skipped, nil
}

// replay reads records by position with no lease and no queue effect.
func (b *Broker) replay(t meta.Topic, p int, offset uint64, want int) ([]Message, error) {
	st, err := b.reg.Describe(t.Name, p)
	if err != nil {
		return nil, err
	}
	if st.Exact && offset >= st.HighWatermark {
		return nil, nil // nothing there yet: do not open a log to say so
	}
	l, err := b.reg.Get(t.Name, p)
	if err != nil {
		return nil, err
	}
	res, err := l.Read(offset, want, math.MaxInt, storage.NoDueLimit)
	for err == nil && len(res.Records) == 0 && res.Skipped > 0 {
		// Unreadable or lost records: a gap, not the end of the log. The
		// answer starts at the first record after it, whose offset tells
		// the reader what was skipped (the log counted it).
		res, err = l.Read(res.Next, want, math.MaxInt, storage.NoDueLimit)
	}
	var below *storage.BelowOldestError
	if errors.As(err, &below) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]Message, len(res.Records))
	for i, r := range res.Records {
		out[i] = Message{Topic: t.Name, Partition: p, Offset: r.Offset, Key: r.Key, Payload: r.Payload, CommittedAt: r.CommittedAt}
	}
	return out, nil
}
