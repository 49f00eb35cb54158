package refusal

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// A refusal is found by its kind through wrapping; a deleted incarnation
// is also a topic that is not here (dispatch settles both the same way),
// and nothing else is.
func TestKindsAreFoundThroughWrapping(t *testing.T) {
	for _, k := range Kinds() {
		err := fmt.Errorf("commit: %w", New(k, time.Second, "partition %d of %q", 3, "t"))
		if !errors.Is(err, k) {
			t.Errorf("errors.Is(%v, %s) = false", err, k)
		}
		wantGone := k == ErrTopicNotFound || k == ErrIncarnationGone
		if got := errors.Is(err, ErrTopicNotFound); got != wantGone {
			t.Errorf("kind %s: errors.Is(ErrTopicNotFound) = %v, want %v", k, got, wantGone)
		}
		for _, other := range Kinds() {
			if other != k && other != ErrTopicNotFound && errors.Is(err, other) {
				t.Errorf("kind %s also matches %s", k, other)
			}
		}
		e, ok := As(err)
		if !ok || e.Kind != k || e.Message != `partition 3 of "t"` || e.RetryAfter != time.Second {
			t.Errorf("As(%v) = %+v, %v", err, e, ok)
		}
	}
	if _, ok := As(errors.New("plain")); ok {
		t.Fatal("a plain error is not a refusal")
	}
}

// Wire names round-trip, are distinct, and an unknown one is refused (a
// newer peer's kind is not guessed at).
func TestParseKind(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		if seen[string(k)] {
			t.Fatalf("duplicate wire name %q", k)
		}
		seen[string(k)] = true
		if got, ok := ParseKind(string(k)); !ok || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, ok)
		}
	}
	for _, name := range []string{"", "Frozen", "topic_gone"} {
		if _, ok := ParseKind(name); ok {
			t.Errorf("ParseKind(%q) accepted", name)
		}
	}
}
