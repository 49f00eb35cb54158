// Package apierr is the HTTP vocabulary of errors used at the edges — the
// client API and node RPC — and by the packages that refuse a client with
// a sentence no other package acts on (validation, grants, conflicts): a
// status code, a human sentence, and for 503 a Retry-After. The HTTP layer
// writes them as {"error": "..."}, and node RPC carries them unchanged, so
// a forwarded request answers exactly like a local one.
//
// Refusals that other packages act on are typed instead (package refusal:
// topic not found, partition out of range, frozen, not owner, …), and so
// are those of packages below the edges that may not choose a status
// (fan-out, move: refusal's invalid, not found, conflict, unavailable);
// From is the one place they get their HTTP status, and every edge goes
// through it.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

// Error is a client-visible failure.
type Error struct {
	Status     int
	Message    string
	RetryAfter time.Duration // only with 503
	// Index, when not nil, is the 0-based index of the batch record the
	// error refuses: batch produce answers it beside the message as
	// {"error": "...", "index": 3}, so a client need not parse the text.
	Index *int
}

func (e *Error) Error() string { return e.Message }

// AtIndex is a copy of e that names batch record i as the one refused.
func (e *Error) AtIndex(i int) *Error {
	c := *e
	c.Index = &i
	return &c
}

// WithIndex marks err as the refusal of batch record i, keeping what it
// is (a refusal keeps its kind for errors.Is); From gives the answer the
// index. An *Error gets it directly (AtIndex).
func WithIndex(err error, i int) error {
	if e, ok := err.(*Error); ok {
		return e.AtIndex(i)
	}
	return refusal.WithIndex(err, i)
}

// New builds an Error with a formatted message.
func New(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

func BadRequest(format string, args ...any) *Error {
	return New(http.StatusBadRequest, format, args...)
}
func NotFound(format string, args ...any) *Error { return New(http.StatusNotFound, format, args...) }
func Forbidden(format string, args ...any) *Error {
	return New(http.StatusForbidden, format, args...)
}
func Conflict(format string, args ...any) *Error { return New(http.StatusConflict, format, args...) }
func Gone(format string, args ...any) *Error     { return New(http.StatusGone, format, args...) }
func TooLarge(format string, args ...any) *Error {
	return New(http.StatusRequestEntityTooLarge, format, args...)
}

// Unavailable is a 503 that tells the client when to come back.
func Unavailable(retry time.Duration, format string, args ...any) *Error {
	e := New(http.StatusServiceUnavailable, format, args...)
	e.RetryAfter = retry
	return e
}

// Status returns err's HTTP status: an Error's own, a refusal's (From), or
// 500 for anything else (an internal failure the client cannot fix).
func Status(err error) int {
	if e, ok := From(err); ok {
		return e.Status
	}
	return http.StatusInternalServerError
}

// defaultRetry is a 503's Retry-After when the refusal names none.
const defaultRetry = time.Second

// From returns err as the client sees it: the *Error in its chain, or a
// typed refusal (package refusal) with its status — 404 for a topic,
// incarnation or other thing that is not here, 400 for a partition out
// of range or an invalid request, 409 for a conflict, 503 with
// Retry-After for the temporary ones — and the same sentence. false
// means err is an internal failure (500, its detail kept for the log).
func From(err error) (*Error, bool) {
	var rix *refusal.Indexed
	if errors.As(err, &rix) {
		e, ok := From(rix.Err)
		if !ok {
			return nil, false
		}
		return e.AtIndex(rix.I), true
	}
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	r, ok := refusal.As(err)
	if !ok {
		return nil, false
	}
	status, ok := statusOf(r.Kind)
	if !ok {
		return nil, false
	}
	out := &Error{Status: status, Message: r.Message, Index: r.Index}
	if status == http.StatusServiceUnavailable {
		out.RetryAfter = r.RetryAfter
		if out.RetryAfter <= 0 {
			out.RetryAfter = defaultRetry
		}
	}
	return out, true
}

// statusOf is the HTTP status of each refusal kind (docs/http-api.md).
func statusOf(k refusal.Kind) (int, bool) {
	switch k {
	case refusal.ErrTopicNotFound, refusal.ErrIncarnationGone, refusal.ErrNotFound:
		return http.StatusNotFound, true
	case refusal.ErrPartitionRange, refusal.ErrInvalid:
		return http.StatusBadRequest, true
	case refusal.ErrConflict:
		return http.StatusConflict, true
	case refusal.ErrTooLarge:
		return http.StatusRequestEntityTooLarge, true
	case refusal.ErrGone:
		return http.StatusGone, true
	case refusal.ErrForbidden:
		return http.StatusForbidden, true
	case refusal.ErrFrozen, refusal.ErrNotOwner, refusal.ErrIncarnationAhead, refusal.ErrDiskFull, refusal.ErrFenced,
		refusal.ErrStaleEpoch, refusal.ErrNotLeader, refusal.ErrNotReady, refusal.ErrUnavailable:
		return http.StatusServiceUnavailable, true
	}
	return 0, false
}
