package replica

import (
	"context"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/refusal"
)

// steppedTransport answers each fetch with the error the test hands it
// (nil: an empty answer, nothing new), after telling the test that a
// fetch was asked: the test sees every answer applied before it looks.
type steppedTransport struct {
	asked   chan struct{}
	answers chan error
}

func (s *steppedTransport) Fetch(ctx context.Context, leader string, req FetchRequest) (FetchResponse, error) {
	select {
	case s.asked <- struct{}{}:
	case <-ctx.Done():
		return FetchResponse{}, ctx.Err()
	}
	select {
	case err := <-s.answers:
		return FetchResponse{Epoch: req.Epoch}, err
	case <-ctx.Done():
		return FetchResponse{}, ctx.Err()
	}
}

// TestFollowerNotesAnUnreachableLeader: a fetch that does not reach the
// leader starts the count of its unreachability, a later failure keeps
// its start, an answer (an empty one, or a refusal in the engine's
// words) ends it, and an empty answer never starts it.
func TestFollowerNotesAnUnreachableLeader(t *testing.T) {
	r := newLeaderRig(t, 0)
	tr := &steppedTransport{asked: make(chan struct{}), answers: make(chan error)}
	// The real clock with a backoff of a nanosecond: every answer is
	// applied before the next fetch is asked.
	f, err := NewFollower(FollowerConfig{Self: "b", View: r.md.view(), Log: newMemLog(), Transport: tr, Clock: clock.Real,
		MinBackoff: time.Nanosecond, MaxBackoff: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-tr.asked
	answer := func(err error) Unreachable {
		t.Helper()
		tr.answers <- err
		<-tr.asked // the next fetch: this answer was noted
		u, ok := f.Unreachable()
		if ok != (u != Unreachable{}) {
			t.Fatalf("Unreachable() = %+v, %v", u, ok)
		}
		return u
	}
	before := time.Now() // the next fetch is sent after the answer to this one
	if u := answer(nil); u != (Unreachable{}) {
		t.Fatalf("an empty answer marked the leader unreachable: %+v", u)
	}
	failed := time.Now() // the failing fetch was sent before this
	first := answer(errDown)
	if first.Leader != r.md.view().Leader || first.Epoch != r.md.view().Epoch || first.Since.Before(before) || first.Since.After(failed) {
		t.Fatalf("after a failed fetch: %+v, want leader %q epoch %d since the fetch was sent", first, r.md.view().Leader, r.md.view().Epoch)
	}
	if u := answer(errDown); u != first {
		t.Fatalf("a second failure moved the start: %+v, was %+v", u, first)
	}
	if u := answer(nil); u != (Unreachable{}) {
		t.Fatalf("an answer did not end the count: %+v", u)
	}
	for _, refused := range []error{&EpochError{Have: 2, Asked: 1}, refusal.New(refusal.ErrNotReady, time.Second, "not ready")} {
		answer(errDown)
		if u := answer(refused); u != (Unreachable{}) {
			t.Fatalf("a refusal the leader wrote (%v) counted as unreachable: %+v", refused, u)
		}
	}
}
