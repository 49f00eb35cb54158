package move

import (
	"context"
	"fmt"
)

// OwnerConfirmer is leader confirmation of a partition's owner
// (meta.Store.ConfirmOwner): only a nil error is an answer.
type OwnerConfirmer interface {
	ConfirmOwner(ctx context.Context, topic string, p int) (owner, target string, err error)
}

// Thawer lifts a move session's freeze (broker.Broker.Thaw).
type Thawer interface {
	Thaw(topic string, p int, holder string) (bool, error)
}

// ThawIfOwner is the source's side of ending a session without a flip: it
// lifts holder's freeze of topic/p only if the leader confirms self still
// owns the partition. After a flip the old copy stays frozen whatever
// anyone asks — it no longer takes commits — so a session's late thaw can
// never reopen a copy the destination now serves. A refusal is a
// *ThawRefusedError.
func ThawIfOwner(ctx context.Context, c OwnerConfirmer, t Thawer, self, topic string, p int, holder string) error {
	owner, _, err := c.ConfirmOwner(ctx, topic, p)
	if err != nil {
		return &ThawRefusedError{Topic: topic, Partition: p, Cause: err}
	}
	if owner != self {
		return &ThawRefusedError{Topic: topic, Partition: p, Owner: owner}
	}
	_, err = t.Thaw(topic, p, holder)
	return err
}

// ThawRefusedError is a thaw ThawIfOwner refused: the owner could not be
// confirmed (Cause; ask again later), or another node owns the partition
// (Owner; the freeze stays for good).
type ThawRefusedError struct {
	Topic     string
	Partition int
	Owner     string
	Cause     error
}

func (e *ThawRefusedError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("thaw %s/%d: %v", e.Topic, e.Partition, e.Cause)
	}
	return fmt.Sprintf("thaw %s/%d: %q owns it now; the freeze stays", e.Topic, e.Partition, e.Owner)
}

func (e *ThawRefusedError) Unwrap() error { return e.Cause }
