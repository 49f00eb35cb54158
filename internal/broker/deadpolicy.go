package broker

import "github.com/narad-io/narad/internal/refusal"

// MaxDeliveriesCap bounds max_deliveries (docs/concepts.md, "Dead letters").
const MaxDeliveriesCap = 1000

// checkDeadLetter validates a topic's dead-letter policy as it would be
// after a create or PATCH: max_deliveries 0..1000, and with it above 0 a
// dead_letter_topic that exists (404), is not the topic itself, and is
// neither a delay child nor a remote child (400). The metastore checks
// the same where the command applies (meta/deadletter.go), so a race
// with a delete of the dead-letter topic cannot slip through; this is
// the check that words the refusal for a client.
func (a *admin) checkDeadLetter(name string, max int, dlq string) error {
	if max < 0 || max > MaxDeliveriesCap {
		return refusal.New(refusal.ErrInvalid, 0, "max_deliveries must be 0 (off) or 1..%d, got %d", MaxDeliveriesCap, max)
	}
	if dlq == "" {
		if max > 0 {
			return refusal.New(refusal.ErrInvalid, 0, "max_deliveries %d needs dead_letter_topic: the topic a record goes to once its deliveries are used up", max)
		}
		return nil
	}
	if err := ValidateTopicName(dlq); err != nil {
		return refusal.New(refusal.ErrInvalid, 0, "dead_letter_topic: %s", err.Error())
	}
	if dlq == name {
		return refusal.New(refusal.ErrInvalid, 0, "dead_letter_topic %q is the topic itself: name another topic", dlq)
	}
	d, ok := a.meta.Topic(dlq)
	switch {
	case !ok:
		return refusal.New(refusal.ErrNotFound, 0, "dead_letter_topic %q does not exist: create it first", dlq)
	case d.Remote != nil:
		return refusal.New(refusal.ErrInvalid, 0, "dead_letter_topic %q is a remote child (it has no partitions in this cluster)", dlq)
	case d.FanoutDelayMs > 0:
		return refusal.New(refusal.ErrInvalid, 0, "dead_letter_topic %q is a delay child (its records come from its parent only)", dlq)
	}
	return nil
}
