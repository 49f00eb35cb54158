package broker

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// MaxConsumeBatch bounds max=N (docs/http-api.md).
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
	Headers       []header.Header // sorted by name; nil when none
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
		return nil, refusal.New(refusal.ErrPartitionRange, 0, "partition %d is out of range: %q has %d partitions", *req.Partition, t.Name, t.Partitions)
	}
	if req.Offset != nil && req.Partition == nil {
		return nil, apierr.BadRequest("offset needs partition (replay reads one partition by position)")
	}
	want := max(req.Max, 1)
	wait := min(req.Wait, b.cfg.MaxConsumeWait)
	var parts []int
	if req.Partition != nil {
		if err := b.servedHere(t, *req.Partition); err != nil {
			return nil, err
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
		if ctx.Err() != nil {
			// Whoever asked is gone — a forwarding node that gave up on a
			// frozen owner, whose request is served only now: records
			// leased for it would wait out their visibility timeout.
			return nil, nil
		}
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

// ConsumeWait is the long-poll a consume asking for wait gets here: wait
// capped by the server's longest.
func (b *Broker) ConsumeWait(wait time.Duration) time.Duration {
	return max(min(wait, b.cfg.MaxConsumeWait), 0)
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
		if p := (first + i) % n; b.owned(t.Name, p) && b.roles.Gate(t, p) == nil {
			out = append(out, p)
		}
	}
	return out
}

// lease reserves and reads up to want records across parts, within one
// answer's byte budget (answer). A partition that cannot serve (its 503
// names why) fails a consume pinned to it; an unpinned one passes it by
// and takes records from the others (the describe, the log and
// errors_total report the broken partition).
func (b *Broker) lease(t meta.Topic, parts []int, want int) ([]Message, error) {
	// One slice for the whole answer, which the reads append to: growing
	// it from nothing (and each read's own slice, copied in) was two of
	// the largest allocations of a max=100 consume (~14 KiB of Message
	// each). Capped, since max may be far more than is there.
	out := make([]Message, 0, min(want, 128))
	budget := answer{max: b.cfg.MaxConsumeBytes}
	for _, p := range parts {
		if len(out) >= want || budget.full() {
			break
		}
		q, err := b.queue(t, p)
		if err == nil {
			var l *storage.Log
			if l, err = b.logWithWork(t.Name, p, q); err == nil && l != nil {
				out, err = b.leaseFrom(t, q, l, out, want, &budget)
			}
		}
		if err != nil && len(parts) == 1 {
			return out, hosted.StorageErr(t.Name, p, "be read", err)
		}
	}
	b.countConsumed(out)
	return out, nil
}

// countConsumed counts delivered records by partition: one Add per
// partition's run (lease appends partition by partition) on the child
// bound for it (metrics.PartitionCounters), not one label lookup per
// record — 100 of them per max=100 consume.
func (b *Broker) countConsumed(out []Message) {
	bytes := 0
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j].Partition == out[i].Partition {
			bytes += len(out[j].Payload)
			j++
		}
		b.m.MessagesConsumed.Add(out[i].Topic, out[i].Partition, float64(j-i))
		i = j
	}
	if len(out) > 0 {
		b.m.BytesConsumed.Add(float64(bytes))
	}
}

// leaseFrom reserves and reads records of one partition into out, in
// rounds sized by the records last read there (queue.fitting), so leases
// are reserved only for what is likely to fit; a lease the budget then
// cannot hold is released at once, never left to its visibility timeout.
// A round that only stepped over unreadable records (settled as skipped)
// goes on: a gap is not the end of the partition.
func (b *Broker) leaseFrom(t meta.Topic, q *hosted.Queue, l *storage.Log, out []Message, want int, budget *answer) ([]Message, error) {
	for len(out) < want && !budget.full() {
		if oldest := l.Oldest(); q.Table.Frontier() < oldest {
			q.Table.AdvanceTo(oldest)
		}
		n := fitting(q, want-len(out), budget)
		if n == 0 {
			break
		}
		leases := q.Table.Reserve(l.HWM(), n)
		if len(leases) == 0 {
			break
		}
		before := len(out)
		var skipped bool
		var err error
		out, skipped, err = b.readLeased(t.Name, q, l, leases, budget, out)
		if err != nil {
			return out, err
		}
		if got := len(out) - before; got < len(leases) && (got > 0 || !skipped) {
			break // the budget cut the round, or records were not readable: the next consume looks again
		}
	}
	return out, nil
}

// answer is the byte budget of one consume or replay answer: keys and
// payloads up to max bytes, except that the first record always fits, so
// an oversized record cannot wedge its partition.
type answer struct {
	max, used, n int
}

func (a *answer) fits(size int) bool { return a.n == 0 || a.used+size <= a.max }
func (a *answer) add(size int)       { a.used += size; a.n++ }
func (a *answer) full() bool         { return a.n > 0 && a.used >= a.max }

// left is what a read may still return (storage.Log.Read returns one
// record past it when it has none yet; fits decides about that one).
func (a *answer) left() int { return max(a.max-a.used, 1) }

// firstProbe is how many records a partition's first round reserves before
// anything was read there to learn their size from.
const firstProbe = 16

// fitting is how many of n records to reserve next: as many as records of
// the size last read on this partition (else of the answer's so far) fill
// of what is left of the budget, at least one when the answer is still
// empty, and none when not even one such record would fit any more.
func fitting(q *hosted.Queue, n int, a *answer) int {
	size := int(q.RecordBytes.Load())
	if size <= 0 && a.n > 0 {
		size = a.used / a.n // nothing read here yet: guess from the answer so far
	}
	if size <= 0 {
		return min(n, firstProbe)
	}
	left := a.max - a.used
	if a.n > 0 && left < size {
		return 0
	}
	return min(n, max(left/size, 1))
}

// logWithWork returns the partition's log if there may be something to
// deliver. A closed log whose directory shows nothing past the frontier
// stays closed: an idle consumer must not keep (or make) logs open.
func (b *Broker) logWithWork(topic string, p int, q *hosted.Queue) (*storage.Log, error) {
	if b.parts.Peek(topic, p) == nil && q.Table.Stats().InFlight == 0 {
		st, err := b.parts.Describe(topic, p)
		if err == nil && st.Exact && st.HighWatermark <= q.Table.Frontier() {
			return nil, nil
		}
	}
	return b.parts.Get(topic, p)
}

// readLeased reads the records of freshly reserved leases into the answer
// budget a, appending them to out. Reserve first, then read: a lease
// whose record turns out unreadable is marked skipped (recorded loss), one
// below retention is dropped by moving the frontier, and one that cannot
// be read for another reason — or that the budget cannot hold — is
// released at once (and waiting consumers are woken to take it). skipped
// says some lease was settled as unreadable.
func (b *Broker) readLeased(topic string, q *hosted.Queue, l *storage.Log, leases []lease.Lease, a *answer, out []Message) (_ []Message, skipped bool, err error) {
	// Reserve hands out the lowest offsets first, so leases are nearly
	// always in order already: checking first spares the sort, and
	// slices.SortFunc spares sort.Slice's two allocations per round.
	if !slices.IsSortedFunc(leases, byOffset) {
		slices.SortFunc(leases, byOffset)
	}
	before := len(out)
	readBytes, readCount, released := 0, 0, 0
	release := func(ls []lease.Lease) {
		for _, x := range ls {
			// Those MarkSkipped settled are gone already: ErrGone, harmless.
			if q.Table.Release(x.Offset, x.Nonce) == nil {
				released++
			}
		}
	}
	defer func() {
		if readCount > 0 {
			q.RecordBytes.Store(int64(readBytes / readCount))
		}
		// Records given back are available now: wake parked consumers.
		// Only with an answer in hand, so this consume cannot wake itself
		// into a loop.
		if released > 0 && len(out) > before {
			b.topicState(topic).notify.Fire()
		}
	}()
	for i := 0; i < len(leases); {
		if a.full() {
			release(leases[i:])
			break
		}
		// A run of consecutive offsets is one read.
		j := i + 1
		for j < len(leases) && leases[j].Offset == leases[j-1].Offset+1 {
			j++
		}
		run := leases[i:j]
		res, err := l.Read(run[0].Offset, len(run), a.left(), storage.NoDueLimit)
		var below *storage.BelowOldestError
		switch {
		case errors.As(err, &below):
			q.Table.AdvanceTo(below.Oldest) // drops the leases under it
			run = run[:0]
		case err != nil:
			release(leases[i:])
			return out, skipped, err
		case res.Skipped > 0:
			q.Table.MarkSkipped(res.SkippedFrom, res.SkippedFrom+res.Skipped)
			skipped = true
		}
		k, cut := 0, false
		for _, r := range res.Records {
			for k < len(run) && run[k].Offset < r.Offset {
				release(run[k : k+1])
				k++
			}
			if k < len(run) && run[k].Offset == r.Offset {
				size := len(r.Key) + len(r.Payload)
				readBytes, readCount = readBytes+size, readCount+1
				if cut = !a.fits(size); cut {
					break
				}
				a.add(size)
				ls := run[k]
				out = append(out, Message{Topic: topic, Partition: ls.Partition, Offset: r.Offset,
					Key: r.Key, Payload: r.Payload, CommittedAt: r.CommittedAt, Headers: r.Headers,
					ReceiptHandle: ls.Handle(), DeliveryCount: ls.DeliveryCount})
				k++
			}
		}
		// Leases the read did not reach, or the budget could not hold, go
		// back; the next consume takes them again.
		if cut {
			release(leases[i+k:])
			break
		}
		release(run[k:])
		i = j
	}
	return out, skipped, nil
}

func byOffset(a, b lease.Lease) int { return cmp.Compare(a.Offset, b.Offset) }

// replay reads records by position with no lease and no queue effect.
func (b *Broker) replay(t meta.Topic, p int, offset uint64, want int) ([]Message, error) {
	st, err := b.parts.Describe(t.Name, p)
	if err != nil {
		return nil, err
	}
	if st.Exact && offset >= st.HighWatermark {
		return nil, nil // nothing there yet: do not open a log to say so
	}
	l, err := b.parts.Get(t.Name, p)
	if err != nil {
		return nil, err
	}
	// Read's byte bound is the answer's: always the first record, then
	// none that would pass the cap.
	res, err := l.Read(offset, want, b.cfg.MaxConsumeBytes, storage.NoDueLimit)
	for err == nil && len(res.Records) == 0 && res.Skipped > 0 {
		// Unreadable or lost records: a gap, not the end of the log. The
		// answer starts at the first record after it, whose offset tells
		// the reader what was skipped (the log counted it).
		res, err = l.Read(res.Next, want, b.cfg.MaxConsumeBytes, storage.NoDueLimit)
	}
	var below *storage.BelowOldestError
	if errors.As(err, &below) {
		return nil, nil
	}
	if err != nil {
		return nil, hosted.StorageErr(t.Name, p, "be read", err)
	}
	out := make([]Message, len(res.Records))
	for i, r := range res.Records {
		out[i] = Message{Topic: t.Name, Partition: p, Offset: r.Offset, Key: r.Key, Payload: r.Payload, CommittedAt: r.CommittedAt, Headers: r.Headers}
	}
	return out, nil
}
