package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

func TestStatus(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{BadRequest("x"), http.StatusBadRequest},
		{fmt.Errorf("wrapped: %w", NotFound("topic %q", "a")), http.StatusNotFound},
		{Unavailable(time.Second, "later"), http.StatusServiceUnavailable},
		{errors.New("disk on fire"), http.StatusInternalServerError},
	}
	for _, c := range cases {
		if got := Status(c.err); got != c.want {
			t.Errorf("Status(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if e := NotFound("topic %q does not exist", "a"); e.Error() != `topic "a" does not exist` {
		t.Fatalf("message: %q", e.Error())
	}
}

// Every refusal kind has its status of docs/http-api.md and keeps its
// sentence; a temporary one keeps its Retry-After, or gets 1 s.
func TestFromRefusals(t *testing.T) {
	want := map[refusal.Kind]int{
		refusal.ErrTopicNotFound:    http.StatusNotFound,
		refusal.ErrIncarnationGone:  http.StatusNotFound,
		refusal.ErrPartitionRange:   http.StatusBadRequest,
		refusal.ErrIncarnationAhead: http.StatusServiceUnavailable,
		refusal.ErrFrozen:           http.StatusServiceUnavailable,
		refusal.ErrNotOwner:         http.StatusServiceUnavailable,
		refusal.ErrDiskFull:         http.StatusServiceUnavailable,
		refusal.ErrFenced:           http.StatusServiceUnavailable,
		refusal.ErrStaleEpoch:       http.StatusServiceUnavailable,
		refusal.ErrNotLeader:        http.StatusServiceUnavailable,
		refusal.ErrNotReady:         http.StatusServiceUnavailable,
		refusal.ErrInvalid:          http.StatusBadRequest,
		refusal.ErrNotFound:         http.StatusNotFound,
		refusal.ErrConflict:         http.StatusConflict,
		refusal.ErrUnavailable:      http.StatusServiceUnavailable,
		refusal.ErrTooLarge:         http.StatusRequestEntityTooLarge,
		refusal.ErrGone:             http.StatusGone,
		refusal.ErrForbidden:        http.StatusForbidden,
	}
	for _, k := range refusal.Kinds() {
		status, ok := want[k]
		if !ok {
			t.Fatalf("kind %s has no status in this test: add it to statusOf and here", k)
		}
		err := fmt.Errorf("wrapped: %w", refusal.New(k, 5*time.Second, "because %d", 7))
		e, ok := From(err)
		if !ok || e.Status != status || e.Message != "because 7" || Status(err) != status {
			t.Fatalf("From(%s) = %+v, %v; want status %d", k, e, ok, status)
		}
		if status == http.StatusServiceUnavailable && e.RetryAfter != 5*time.Second {
			t.Errorf("%s: Retry-After %v, want 5s", k, e.RetryAfter)
		}
		if e, _ := From(refusal.New(k, 0, "x")); status == http.StatusServiceUnavailable && e.RetryAfter != time.Second {
			t.Errorf("%s without Retry-After: %v, want the 1 s default", k, e.RetryAfter)
		}
	}
	if _, ok := From(refusal.New("a_kind_from_a_newer_peer", 0, "x")); ok {
		t.Fatal("an unknown kind is an internal failure, not a guess")
	}
	if _, ok := From(errors.New("disk on fire")); ok {
		t.Fatal("a plain error is internal")
	}
}

func TestAtIndexNamesTheRecordAndKeepsTheRest(t *testing.T) {
	base := TooLarge("record 3: payload of %d bytes is over the 1 MiB cap", 2<<20)
	e := base.AtIndex(3)
	if e.Index == nil || *e.Index != 3 || e.Status != http.StatusRequestEntityTooLarge || e.Message != base.Message {
		t.Fatalf("AtIndex: %+v", e)
	}
	if base.Index != nil {
		t.Fatal("AtIndex changed the error it was called on")
	}
}

// A refusal marked with an index keeps its kind, and its answer names the
// index.
func TestWithIndexKeepsTheKind(t *testing.T) {
	err := WithIndex(refusal.New(refusal.ErrPartitionRange, 0, "record 2: partition 9 is out of range"), 2)
	if !errors.Is(err, refusal.ErrPartitionRange) {
		t.Fatal("WithIndex lost the refusal's kind")
	}
	e, ok := From(err)
	if !ok || e.Status != http.StatusBadRequest || e.Index == nil || *e.Index != 2 {
		t.Fatalf("From(WithIndex(...)) = %+v, %v", e, ok)
	}
	if e := WithIndex(BadRequest("x"), 4).(*Error); e.Index == nil || *e.Index != 4 {
		t.Fatalf("an *Error keeps being one, with the index: %+v", e)
	}
}

// A refusal of a batch record keeps its index through From, whether the
// refusal carries it (refusal.WithIndex) or wraps an error that is not one.
func TestFromRefusalIndex(t *testing.T) {
	e, ok := From(refusal.WithIndex(refusal.New(refusal.ErrTooLarge, 0, "record 3: too big"), 3))
	if !ok || e.Status != http.StatusRequestEntityTooLarge || e.Index == nil || *e.Index != 3 || e.Message != "record 3: too big" {
		t.Fatalf("indexed refusal: %+v, %v", e, ok)
	}
	e, ok = From(refusal.WithIndex(BadRequest("not a refusal"), 4))
	if !ok || e.Status != http.StatusBadRequest || e.Index == nil || *e.Index != 4 {
		t.Fatalf("indexed apierr: %+v, %v", e, ok)
	}
}
