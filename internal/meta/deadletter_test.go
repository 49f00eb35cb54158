package meta

import (
	"strings"
	"testing"
)

func withDLQ(name, dlq string, max int) Topic {
	t := plainTopic(name, 1)
	t.MaxDeliveries, t.DeadLetterTopic = max, dlq
	return t
}

// TestDeadLetterRules: the dead-letter link is checked where the command
// applies — an existing topic, not the topic itself, not a remote or delay
// child — and a topic some topic names is neither deleted nor made a delay
// child (409 naming who names it), until that topic lets go of it.
func TestDeadLetterRules(t *testing.T) {
	f := newBareFSM(t)
	idx := uint64(10)
	apply := func(op Op, payload any) error {
		idx++
		return applyRaw(t, f, idx, op, payload)
	}
	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("dlq", 1)}), nil)
	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("parent", 1)}), nil)

	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: withDLQ("a", "", 3)}), ErrInvalid)
	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: withDLQ("a", "missing", 3)}), ErrNotFound)
	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: withDLQ("a", "a", 3)}), ErrInvalidCombination)
	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: withDLQ("a", "dlq", -1)}), ErrInvalid)
	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: withDLQ("a", "dlq", 3)}), nil)
	if got := bareTopic(t, f, "a"); got.MaxDeliveries != 3 || got.DeadLetterTopic != "dlq" {
		t.Fatalf("stored %d/%q; want 3/dlq", got.MaxDeliveries, got.DeadLetterTopic)
	}

	err := apply(OpDeleteTopic, DeleteTopicCmd{Name: "dlq"})
	wantErr(t, err, ErrConflict)
	if !strings.Contains(err.Error(), `dead_letter_topic of a`) {
		t.Fatalf("the refusal does not name the referrer: %v", err)
	}
	wantErr(t, apply(OpAttach, AttachCmd{Child: "dlq", AttachSpec: AttachSpec{Parent: "parent", Epoch: "e1", DelayMs: 1000}}), ErrConflict)

	// A delay child cannot be named; a plain child can.
	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("slow", 1), Attach: &AttachSpec{Parent: "parent", Epoch: "e2", DelayMs: 1000}}), nil)
	wantErr(t, apply(OpUpdateTopic, TopicUpdate{Name: "a", DeadLetterTopic: ptrTo("slow")}), ErrInvalidCombination)
	remote := Topic{Name: "far", Remote: &RemoteTarget{URL: "http://x", Topic: "y"}, CreatedAt: 1}
	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: remote, Attach: &AttachSpec{Parent: "parent", Epoch: "e3"}}), nil)
	wantErr(t, apply(OpUpdateTopic, TopicUpdate{Name: "a", DeadLetterTopic: ptrTo("far")}), ErrInvalidCombination)
	wantErr(t, apply(OpUpdateTopic, TopicUpdate{Name: "a", DeadLetterTopic: ptrTo("")}), ErrInvalid)
	wantErr(t, apply(OpUpdateTopic, TopicUpdate{Name: "a", DeadLetterTopic: ptrTo("nope")}), ErrNotFound)
	if got := bareTopic(t, f, "a"); got.DeadLetterTopic != "dlq" {
		t.Fatalf("a refused update changed the dead-letter topic to %q", got.DeadLetterTopic)
	}

	// Turned off and cleared: the dead-letter topic may go.
	wantErr(t, apply(OpUpdateTopic, TopicUpdate{Name: "a", MaxDeliveries: ptrTo(0), DeadLetterTopic: ptrTo("")}), nil)
	wantErr(t, apply(OpDeleteTopic, DeleteTopicCmd{Name: "dlq"}), nil)
	// A topic naming itself through PATCH is refused too.
	wantErr(t, apply(OpUpdateTopic, TopicUpdate{Name: "a", MaxDeliveries: ptrTo(2), DeadLetterTopic: ptrTo("a")}), ErrInvalidCombination)
	// Deleting the referrer itself is always allowed.
	wantErr(t, apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("dlq2", 1)}), nil)
	wantErr(t, apply(OpUpdateTopic, TopicUpdate{Name: "a", MaxDeliveries: ptrTo(2), DeadLetterTopic: ptrTo("dlq2")}), nil)
	wantErr(t, apply(OpDeleteTopic, DeleteTopicCmd{Name: "a"}), nil)
	wantErr(t, apply(OpDeleteTopic, DeleteTopicCmd{Name: "dlq2"}), nil)
}

func ptrTo[T any](v T) *T { return &v }
