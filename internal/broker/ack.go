package broker

import (
	"context"
	"errors"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

// AckOp is what an ack request does with its lease.
type AckOp int

const (
	Settle AckOp = iota // ack
	Extend              // extend=true: restart the visibility window
	Nack                // extend=0: release now
)

// MaxAckBatch bounds a batch ack body.
const MaxAckBatch = 10_000

// Ack settles, extends or releases the lease a receipt handle proves.
func (b *Broker) Ack(ctx context.Context, topic, handle string, op AckOp) error {
	t, err := b.topic(topic)
	if err != nil {
		return err
	}
	return b.ack(t, handle, op, nil)
}

// ackQueues remembers, within one batch ack, the queue of each partition
// already proven served here: a batch of 100 handles looked the topic,
// the owner and the queue (under the broker-wide queue mutex) up 100
// times. A batch is one request, so checking ownership once per
// partition in it is checking it when the request arrived.
type ackQueues map[int]*queue

// ack is Ack on a topic record looked up already; qs, when not nil,
// caches the queues of the partitions this batch touched.
func (b *Broker) ack(t meta.Topic, handle string, op AckOp, qs ackQueues) error {
	topic := t.Name
	p, offset, nonce, err := lease.ParseHandle(handle)
	if err != nil {
		return badHandle(handle, err)
	}
	if p >= t.Partitions {
		return refusal.New(refusal.ErrPartitionRange, 0, "receipt_handle %q names partition %d, but %q has %d partitions", handle, p, topic, t.Partitions)
	}
	q := qs[p]
	if q == nil {
		if err := b.servedHere(t, p); err != nil {
			return err
		}
		if q, err = b.queue(t, p); err != nil {
			return err
		}
		if qs != nil {
			qs[p] = q
		}
	}
	switch op {
	case Extend:
		err = q.table.Extend(offset, nonce)
		if err == nil {
			b.m.AckExtended.Inc()
		}
	case Nack:
		err = q.table.Nack(offset, nonce)
		if err == nil {
			b.m.Nacks.Inc()
			b.topicState(topic).notify.Fire() // the record is available now: wake waiters
		}
	default:
		err = q.table.Ack(offset, nonce)
		if err == nil && q.table.TakeFreed() {
			b.topicState(topic).notify.Fire() // room again: wake consumers held back by a cap
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lease.ErrSettled):
		b.m.AckRejected.Inc()
		// Settled covers an ack (this handle's or a later lease's), a
		// dead letter and a purge: the sentence must hold for each.
		return apierr.Gone("receipt_handle %s: the lease on the record at offset %d of partition %d has ended: the record was settled (acked, dead-lettered or purged); there is nothing left to %s", handle, offset, p, opVerb(op))
	case errors.Is(err, lease.ErrGone):
		b.m.AckRejected.Inc()
		return apierr.Gone("the lease of %s lapsed or was superseded; the record may have gone to another consumer", handle)
	case errors.Is(err, lease.ErrAckedAheadFull):
		return apierr.Unavailable(time.Second, "partition %d of %q has too many acks above the frontier; retry", p, topic)
	}
	return err
}

// badHandle refuses a handle that does not parse, in the API's words (the
// lease package's reason without its name).
func badHandle(handle string, err error) error {
	var he *lease.HandleError
	if errors.As(err, &he) {
		return apierr.BadRequest("receipt_handle %q is malformed: %s; pass the receipt_handle of a consume answer as it is", handle, he.Reason)
	}
	return apierr.BadRequest("receipt_handle %q is malformed; pass the receipt_handle of a consume answer as it is", handle)
}

func opVerb(op AckOp) string {
	switch op {
	case Extend:
		return "extend"
	case Nack:
		return "nack"
	}
	return "ack"
}

// AckBatch settles many handles: the error of each (nil: settled) is what
// the single form would have returned; the second result refuses the
// whole batch (no topic, no handles, too many).
func (b *Broker) AckBatch(ctx context.Context, topic string, handles []string) ([]error, error) {
	t, err := b.topic(topic)
	if err != nil {
		return nil, err
	}
	if len(handles) == 0 {
		return nil, apierr.BadRequest("receipt_handles is empty")
	}
	if len(handles) > MaxAckBatch {
		return nil, apierr.TooLarge("%d receipt handles is over the cap of %d", len(handles), MaxAckBatch)
	}
	out := make([]error, len(handles))
	qs := ackQueues{}
	for i, h := range handles {
		out[i] = b.ack(t, h, Settle, qs)
	}
	return out, nil
}
