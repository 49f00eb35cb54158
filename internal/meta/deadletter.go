package meta

import "strings"

// The dead-letter link (docs/concepts.md, "Dead letters"): a topic
// with MaxDeliveries > 0 names a DeadLetterTopic, which must exist, be
// another topic, and be one records can be committed to directly — not a
// remote child (no partitions here) and not a delay child (whose records
// come only from its parent's cursor, due by their delay). These rules
// are checked where the command applies, against the state it applies to,
// so that a delete of the dead-letter topic racing a PATCH naming it
// cannot both win: a topic some topic names is not deleted (ErrConflict,
// naming who names it), and is not attached as a delay child.

// checkDeadLetter holds t's dead-letter fields to the rules.
func (a *applyTx) checkDeadLetter(t Topic) error {
	switch {
	case t.MaxDeliveries < 0:
		return topicErr(t.Name, ErrInvalid, "max_deliveries %d < 0", t.MaxDeliveries)
	case t.MaxDeliveries > 0 && t.DeadLetterTopic == "":
		return topicErr(t.Name, ErrInvalid, "max_deliveries %d needs a dead_letter_topic", t.MaxDeliveries)
	case t.DeadLetterTopic == "":
		return nil
	case t.DeadLetterTopic == t.Name:
		return topicErr(t.Name, ErrInvalidCombination, "a topic cannot be its own dead_letter_topic")
	}
	d, err := a.existingTopic(t.DeadLetterTopic, "dead_letter_topic of "+t.Name)
	if err != nil {
		return err
	}
	switch {
	case d.Remote != nil:
		return topicErr(t.Name, ErrInvalidCombination, "dead_letter_topic %q is a remote child (it has no partitions here)", d.Name)
	case d.FanoutDelayMs > 0:
		return topicErr(t.Name, ErrInvalidCombination, "dead_letter_topic %q is a delay child (its records come from its parent only)", d.Name)
	}
	return nil
}

// deadLetterReferrers lists the topics, other than name itself, that name
// it as their dead-letter topic, in name order. It walks every topic
// record: topic deletes and attaches are rare, and a reverse index would
// be one more thing to keep consistent.
func (a *applyTx) deadLetterReferrers(name string) ([]string, error) {
	var out []string
	err := a.tx.Bucket(bucketTopics).ForEach(func(k, raw []byte) error {
		if string(k) == name {
			return nil
		}
		t, err := decodeTopic(k, raw)
		if err != nil {
			return err
		}
		if t.DeadLetterTopic == name {
			out = append(out, t.Name)
		}
		return nil
	})
	return out, err
}

// refuseIfDeadLetter refuses (ErrConflict) an operation that would leave
// the topics naming name as their dead-letter topic without one fit for
// it: deleting it (what), or attaching it as a delay child.
func (a *applyTx) refuseIfDeadLetter(name, what string) error {
	refs, err := a.deadLetterReferrers(name)
	if err != nil || len(refs) == 0 {
		return err
	}
	const show = 10
	list := refs
	more := ""
	if len(list) > show {
		list, more = list[:show], " and others"
	}
	return topicErr(name, ErrConflict, "is the dead_letter_topic of %s%s: %s; change their dead_letter_topic first",
		strings.Join(list, ", "), more, what)
}
