package broker

import (
	"context"
	"fmt"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/refusal"
)

// Redrive bounds (docs/concepts.md, "Redrive and purge").
const (
	DefaultRedriveMax = 1_000
	MaxRedrive        = 100_000
)

// redriveRound is how many records one redrive round leases, reads and
// produces at once.
const redriveRound = 500

// Redrive moves up to max unconsumed records of topic, from the
// partitions this node serves, into topic to through the produce path,
// and returns how many it moved. It is the dead-letter hand-off run the
// other way, with the same order:
//
//	a record is settled in topic only after the produce of its copy
//	into to returned, i.e. the copy is durable (the ingress WAL's 202).
//
// Each round leases the records first (as a consume does, so no consumer
// gets them meanwhile), produces their copies, then acks the leases. A
// crash mid-round loses the leases, not the records: they are offered
// again and a second redrive moves them again (duplicates in to, never a
// loss), which is what makes a redrive resumable — run it again. A copy
// keeps its key, payload and headers, without the dead-letter headers.
// A produce that fails (to refuses the records: schema, disk full) gives
// the round's leases back and ends the redrive with that refusal, saying
// how many were moved before it.
func (b *Broker) Redrive(ctx context.Context, topic, to string, max int) (int, error) {
	if max < 1 || max > MaxRedrive {
		return 0, refusal.New(refusal.ErrInvalid, 0, "max must be 1..%d, got %d", MaxRedrive, max)
	}
	t, err := b.topic(topic)
	if err != nil {
		return 0, err
	}
	if _, _, err := b.produceTarget(to); err != nil {
		return 0, err
	}
	if to == topic {
		return 0, refusal.New(refusal.ErrInvalid, 0, "to %q is the topic itself: redrive moves records into another topic", to)
	}
	moved := 0
	for _, p := range b.ownedPartitions(t, b.topicState(topic)) {
		for moved < max {
			n, err := b.redriveRound(ctx, topic, to, p, min(max-moved, redriveRound))
			moved += n
			if err != nil {
				return moved, redriveErr(err, moved)
			}
			if n == 0 {
				break
			}
		}
		if moved >= max {
			break
		}
	}
	return moved, nil
}

// redriveRound moves up to want records of topic/p; 0 when there are none
// to lease.
func (b *Broker) redriveRound(ctx context.Context, topic, to string, p, want int) (int, error) {
	t, err := b.topic(topic)
	if err != nil {
		return 0, err
	}
	q, err := b.queue(t, p)
	if err != nil {
		return 0, err
	}
	l, err := b.parts.LogWithWork(q)
	if err != nil || l == nil {
		return 0, err
	}
	// Leased and read as a consume would, within one batch body's bytes.
	msgs, err := q.LeaseFrom(l, nil, want, 0, hosted.NewBudget(MaxBatchBodySize), func() { b.wake(topic) })
	if err != nil {
		b.giveBack(q, msgs)
		return 0, err
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	recs := make([]ProduceRecord, len(msgs))
	for i, m := range msgs {
		// Its own headers, narad-* ones included, go along (the produce is
		// the broker's, header.Reserved); where it was dead-lettered from
		// does not, nor a producer id: a redriven copy is not a retry, and
		// the target's deduplication window may still remember the id of
		// the very record that was dead-lettered, and drop the copy.
		hs := append([]header.Header(nil), header.Without(header.Without(m.Headers, HeaderDLQPrefix), header.MsgID)...)
		recs[i] = ProduceRecord{Key: m.Key, Payload: m.Payload, Headers: hs}
	}
	if _, err := b.produce(ctx, to, recs, true, header.Reserved); err != nil {
		b.giveBack(q, msgs)
		return 0, err
	}
	// The copies are durable: only now settle the originals. A lease that
	// lapsed meanwhile (its record may go to a consumer: a duplicate, the
	// at-least-once of a slow round) is counted moved all the same.
	for _, m := range msgs {
		_, off, nonce, _ := lease.ParseHandle(m.ReceiptHandle)
		q.Table.Ack(off, nonce)
	}
	if q.Table.TakeFreed() {
		b.wake(topic)
	}
	return len(msgs), nil
}

// giveBack releases the leases of a round that moved nothing: the records
// are available at once, their delivery not counted.
func (b *Broker) giveBack(q *hosted.Queue, msgs []Message) {
	for _, m := range msgs {
		if _, off, nonce, err := lease.ParseHandle(m.ReceiptHandle); err == nil {
			q.Table.Release(off, nonce)
		}
	}
	if len(msgs) > 0 {
		b.wake(q.Key.Topic)
	}
}

// redriveErr words a refusal that ended a redrive with what it moved.
func redriveErr(err error, moved int) error {
	if moved == 0 {
		return err
	}
	if re, ok := refusal.As(err); ok {
		return refusal.New(re.Kind, re.RetryAfter, "%s (%d records were moved before it)", re.Message, moved)
	}
	return fmt.Errorf("%w (%d records were moved before it)", err, moved)
}
