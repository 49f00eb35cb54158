package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is a non-2xx answer. Message is the server's {"error": "..."}
// text, or the body or status text when there was none.
type APIError struct {
	Status  int
	Message string
	// RetryAfter is the server's Retry-After hint; zero when absent.
	RetryAfter time.Duration
	// Index, for a refused batch produce, is the 0-based index of the
	// record the server refused ({"error": "...", "index": 3}); nil when
	// the answer names none (another route, or an older server).
	Index *int
}

// Error is the server's sentence and the status: "topic \"x\" does not
// exist (HTTP 404)".
func (e *APIError) Error() string {
	return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status)
}

func newAPIError(resp *http.Response, body []byte) *APIError {
	e := &APIError{Status: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	var wire struct {
		Error string `json:"error"`
		Index *int   `json:"index"`
	}
	if json.Unmarshal(body, &wire) == nil && wire.Error != "" {
		e.Message = wire.Error
		if wire.Index != nil && *wire.Index >= 0 {
			e.Index = wire.Index
		}
	} else if text := strings.TrimSpace(string(body)); text != "" && len(text) <= 512 {
		e.Message = text
	} else {
		e.Message = strings.ToLower(http.StatusText(resp.StatusCode))
	}
	return e
}

// parseRetryAfter reads either form HTTP allows: delay seconds or a date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// IsTransient reports whether err is worth retrying: the server said it is
// overloaded or briefly unavailable (429, 5xx), or the request never got an
// answer. A cancelled or expired ctx is not transient: the caller gave up.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Status == http.StatusTooManyRequests || apiErr.Status >= 500
	}
	return true
}

// RefusedIndex is the index of the batch record an *APIError in err's
// chain refuses, if the server named one.
func RefusedIndex(err error) (int, bool) {
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Index != nil {
		return *apiErr.Index, true
	}
	return 0, false
}

// StatusOf returns the HTTP status of an *APIError in err's chain, or 0.
func StatusOf(err error) int {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Status
	}
	return 0
}
