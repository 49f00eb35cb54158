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

// A kind's name is its wire form: the names, in Kinds' order, are only
// ever appended to. Renaming or reordering one fails here first.
func TestWireNamesOnlyGrow(t *testing.T) {
	want := []string{"topic_not_found", "incarnation_gone", "incarnation_ahead", "partition_out_of_range",
		"frozen", "not_owner", "disk_full", "fenced", "stale_epoch", "not_leader", "not_ready",
		"invalid", "not_found", "conflict", "unavailable", "too_large", "gone", "forbidden"}
	got := Kinds()
	if len(got) != len(want) {
		t.Fatalf("Kinds() has %d kinds, this list %d: append the new kind's wire name here", len(got), len(want))
	}
	for i, k := range got {
		if string(k) != want[i] {
			t.Errorf("kind %d is %q on the wire, was %q: names are added, never changed or moved", i, k, want[i])
		}
	}
}
