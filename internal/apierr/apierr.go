// Package apierr is the HTTP vocabulary of errors shared by every room that
// can refuse a client: a status code, a human sentence, and for 503 a
// Retry-After. The broker returns these, the HTTP layer writes them as
// {"error": "..."}, and node RPC carries them unchanged, so a forwarded
// request answers exactly like a local one.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"time"
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

// Status returns err's HTTP status: the Error's own, or 500 for anything
// that is not an *Error (an internal failure the client cannot fix).
func Status(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return http.StatusInternalServerError
}
