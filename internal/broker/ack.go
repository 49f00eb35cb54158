package broker

import (
	"context"
	"errors"
	"time"

	"github.com/narad-io/narad/internal/duration"
	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/refusal"
)

// AckOp is what an ack request does with its lease.
type AckOp int

const (
	Settle AckOp = iota // ack
	Extend              // extend=true (or a duration: ExtendFor): restart the visibility window
	Nack                // extend=0: release now
)

// MaxAckBatch bounds a batch ack body.
const MaxAckBatch = 10_000

// MinLeaseDuration and MaxVisibility bound the life ExtendFor and a
// consume's own visibility (ConsumeRequest.Visibility) give a lease: the
// API counts milliseconds, and the longest a lease may live is the cap of
// a topic's visibility_timeout_ms (12 h, as SQS's 43,200 seconds).
const (
	MinLeaseDuration = time.Millisecond
	MaxVisibility    = 12 * time.Hour
)

// Ack settles, extends (for the topic's visibility timeout) or releases
// the lease a receipt handle proves.
func (b *Broker) Ack(ctx context.Context, topic, handle string, op AckOp) error {
	t, err := b.topic(topic)
	if err != nil {
		return err
	}
	return b.ack(t, handle, op, 0)
}

// ExtendFor renews the lease a receipt handle proves to expire d from
// now, shorter or longer than the topic's visibility timeout; d must lie
// in MinLeaseDuration..MaxVisibility (ValidLeaseDuration). Ack with
// Extend renews it for the topic's timeout, and with Nack gives it up
// now.
func (b *Broker) ExtendFor(ctx context.Context, topic, handle string, d time.Duration) error {
	if err := ValidLeaseDuration("extend", d); err != nil {
		return err
	}
	t, err := b.topic(topic)
	if err != nil {
		return err
	}
	return b.ack(t, handle, Extend, d)
}

// ValidLeaseDuration refuses a lease duration outside
// MinLeaseDuration..MaxVisibility, naming the parameter that gave it.
func ValidLeaseDuration(name string, d time.Duration) error {
	if d < MinLeaseDuration || d > MaxVisibility {
		return refusal.New(refusal.ErrInvalid, 0, "%s must be a duration of 1ms..12h (43200000 ms), got %s", name, duration.Format(d))
	}
	return nil
}

// ack is Ack on a topic record looked up already; an Extend lives d, or
// the topic's visibility timeout when d is 0.
func (b *Broker) ack(t meta.Topic, handle string, op AckOp, d time.Duration) error {
	p, offset, nonce, err := lease.ParseHandle(handle)
	if err != nil {
		return badHandle(handle, err)
	}
	q, err := b.ackQueue(t, handle, p)
	if err != nil {
		return err
	}
	switch op {
	case Extend:
		err = q.Extend(offset, nonce, d)
		if err == nil {
			b.m.AckExtended.Inc()
		}
	case Nack:
		err = q.Nack(offset, nonce)
		if err == nil {
			b.m.Nacks.Inc()
			b.wake(t.Name) // the record is available now: wake waiters
		}
	default:
		err = q.Ack(offset, nonce)
		if err == nil && q.Table.TakeFreed() {
			b.wake(t.Name) // capacity again: wake consumers held back by a cap
		}
	}
	return ackErr(b.m, t.Name, handle, p, offset, op, err)
}

// ackQueue returns the queue of partition p, which handle names, if this
// node serves it (servedHere: its owner, and its replica gate open). A batch ack asks once per partition it names: a batch
// is one request, so checking ownership once per partition in it is
// checking it when the request arrived.
func (b *Broker) ackQueue(t meta.Topic, handle string, p int) (*hosted.Queue, error) {
	if p >= t.Partitions {
		return nil, refusal.New(refusal.ErrPartitionRange, 0, "receipt_handle %q names partition %d, but %q has %d partitions", handle, p, t.Name, t.Partitions)
	}
	if err := b.servedHere(t, p); err != nil {
		return nil, err
	}
	return b.queue(t, p)
}

// ackErr words the lease table's answer to one handle in the API's terms
// (nil stays nil).
func ackErr(m *metrics.Metrics, topic, handle string, p int, offset uint64, op AckOp, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lease.ErrSettled):
		m.AckRejected.Inc()
		// Settled covers an ack (this handle's or a later lease's), a
		// dead letter and a purge: the sentence must hold for each.
		return refusal.New(refusal.ErrGone, 0, "receipt_handle %s: the lease on the record at offset %d of partition %d has ended: the record was settled (acked, dead-lettered or purged); there is nothing left to %s", handle, offset, p, opVerb(op))
	case errors.Is(err, lease.ErrGone):
		m.AckRejected.Inc()
		return refusal.New(refusal.ErrGone, 0, "the lease of %s lapsed or was superseded; the record may have gone to another consumer", handle)
	case errors.Is(err, lease.ErrAckedAheadFull):
		return refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q has too many acks above the frontier; retry", p, topic)
	}
	return err
}

// badHandle refuses a handle that does not parse, in the API's words (the
// lease package's reason without its name).
func badHandle(handle string, err error) error {
	var he *lease.HandleError
	if errors.As(err, &he) {
		return refusal.New(refusal.ErrInvalid, 0, "receipt_handle %q is malformed: %s; pass the receipt_handle of a consume answer as it is", handle, he.Reason)
	}
	return refusal.New(refusal.ErrInvalid, 0, "receipt_handle %q is malformed; pass the receipt_handle of a consume answer as it is", handle)
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
		return nil, refusal.New(refusal.ErrInvalid, 0, "receipt_handles is empty")
	}
	if len(handles) > MaxAckBatch {
		return nil, refusal.New(refusal.ErrTooLarge, 0, "%d receipt handles is over the cap of %d", len(handles), MaxAckBatch)
	}
	return b.ackMany(t, handles), nil
}
