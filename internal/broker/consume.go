package broker

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/messageid"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
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
	// Visibility, when not 0, is how long the leases this consume grants
	// live instead of the topic's visibility timeout
	// (MinLeaseDuration..MaxVisibility); a replay takes none, so it
	// refuses one.
	Visibility time.Duration
}

// Message is one delivered or replayed record (hosted.Message).
type Message = hosted.Message

// identify gives every message of topic t its message id: from the WAL
// source its log kept, else from its position (package messageid). The
// ids are cut from one string: two allocations an answer, not one a
// message.
func identify(t meta.Topic, msgs []Message) {
	if len(msgs) == 0 {
		return
	}
	buf := make([]byte, 0, len(msgs)*messageid.MaxLen)
	ends := make([]int, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		buf = messageid.AppendOf(buf, t.Name, t.Incarnation, m.Partition, m.Offset, m.Origin, m.Seq)
		ends[i] = len(buf)
	}
	all := string(buf)
	for i, start := 0, 0; i < len(msgs); i++ {
		msgs[i].ID, start = all[start:ends[i]], ends[i]
	}
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
		return nil, refusal.New(refusal.ErrInvalid, 0, "max must be 1..%d, got %d", MaxConsumeBatch, req.Max)
	}
	if req.Wait < 0 {
		return nil, refusal.New(refusal.ErrInvalid, 0, "wait must not be negative")
	}
	if req.Partition != nil && (*req.Partition < 0 || *req.Partition >= t.Partitions) {
		return nil, refusal.New(refusal.ErrPartitionRange, 0, "partition %d is out of range: %q has %d partitions", *req.Partition, t.Name, t.Partitions)
	}
	if req.Offset != nil && req.Partition == nil {
		return nil, refusal.New(refusal.ErrInvalid, 0, "offset needs partition (replay reads one partition by position)")
	}
	if req.Visibility != 0 {
		if err := ValidLeaseDuration("visibility", req.Visibility); err != nil {
			return nil, err
		}
		if req.Offset != nil {
			return nil, refusal.New(refusal.ErrInvalid, 0, "visibility is for leases, and a replay (offset) leases nothing")
		}
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
			msgs, err = b.parts.Replay(t.Name, *req.Partition, *req.Offset, want, b.cfg.MaxConsumeBytes)
		} else {
			if parts == nil || req.Partition == nil {
				parts = b.ownedPartitions(t, ts)
			}
			msgs, err = b.lease(t, parts, want, req.Visibility)
		}
		if err != nil || len(msgs) > 0 {
			b.m.ConsumeWait.Observe(time.Since(start).Seconds())
			identify(t, msgs)
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
// answer's byte budget (answer), leased for vis (0: the topic's
// visibility timeout). A partition that cannot serve (its 503
// names why) fails a consume pinned to it; an unpinned one passes it by
// and takes records from the others (the describe, the log and
// errors_total report the broken partition).
func (b *Broker) lease(t meta.Topic, parts []int, want int, vis time.Duration) ([]Message, error) {
	// One slice for the whole answer, which the reads append to: growing
	// it from nothing (and each read's own slice, copied in) was two of
	// the largest allocations of a max=100 consume (~14 KiB of Message
	// each). Capped, since max may be far more than is there.
	out := make([]Message, 0, min(want, 128))
	budget := hosted.NewBudget(b.cfg.MaxConsumeBytes)
	for _, p := range parts {
		if len(out) >= want || budget.Full() {
			break
		}
		q, err := b.queue(t, p)
		if err == nil {
			var l *storage.Log
			if l, err = b.parts.LogWithWork(q); err == nil && l != nil {
				out, err = q.LeaseFrom(l, out, want, vis, budget, func() { b.wake(t.Name) })
			}
		}
		if err != nil && len(parts) == 1 {
			return out, hosted.StorageErr(t.Name, p, "be read", err)
		}
	}
	countConsumed(b.m, out)
	return out, nil
}

// countConsumed counts delivered records by partition: one Add per
// partition's run (lease appends partition by partition) on the child
// bound for it (metrics.PartitionCounters), not one label lookup per
// record — 100 of them per max=100 consume.
func countConsumed(m *metrics.Metrics, out []Message) {
	bytes := 0
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j].Partition == out[i].Partition {
			bytes += len(out[j].Payload)
			j++
		}
		m.MessagesConsumed.Add(out[i].Topic, out[i].Partition, float64(j-i))
		i = j
	}
	if len(out) > 0 {
		m.BytesConsumed.Add(float64(bytes))
	}
}
