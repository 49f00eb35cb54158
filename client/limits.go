package client

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// The rate limits' names, as the API spells them (a user's "limits").
const (
	LimitProduceRecords  = "produce_records_per_s"
	LimitProduceBytes    = "produce_bytes_per_s"
	LimitConsumeRequests = "consume_requests_per_s"
)

// Limits are the rate limits in force for a user on the node that
// answered, per second on each node; 0 is unlimited. User.LimitsFromDefaults
// names those that are the node's configured defaults rather than the
// user's own.
type Limits struct {
	ProduceRecordsPerS  int64 `json:"produce_records_per_s"`
	ProduceBytesPerS    int64 `json:"produce_bytes_per_s"`
	ConsumeRequestsPerS int64 `json:"consume_requests_per_s"`
}

// OwnLimits are limits a user is given of its own, field by field: a nil
// field is not set (the node's default applies), a set one wins, 0
// meaning unlimited.
type OwnLimits struct {
	ProduceRecordsPerS  *int64 `json:"produce_records_per_s,omitempty"`
	ProduceBytesPerS    *int64 `json:"produce_bytes_per_s,omitempty"`
	ConsumeRequestsPerS *int64 `json:"consume_requests_per_s,omitempty"`
}

// Rate is a limit's value for OwnLimits and LimitsChange: Rate(0) is
// unlimited.
func Rate(perSecond int64) *int64 { return &perSecond }

// LimitsChange changes a user's own limits (PATCH /v1/users/{name}, a
// JSON merge patch): Reset drops all of them first; then each entry of
// Set gives that limit a value (Rate(n)), or with nil drops it back to
// the node's default. Names are the Limit* constants.
type LimitsChange struct {
	Reset bool
	Set   map[string]*int64
}

// SetLimits changes a user's own rate limits and returns the user with
// the limits now in force. It applies to the user's next request on
// every node.
func (c *Client) SetLimits(ctx context.Context, name string, change LimitsChange) (User, error) {
	if name == "" {
		return User{}, errEmptyUser
	}
	// A reset alone is "limits": null; with values, a reset sends null
	// for every limit it does not set (a merge patch says one or the
	// other).
	var limits map[string]*int64
	if !change.Reset || len(change.Set) > 0 {
		limits = map[string]*int64{}
		if change.Reset {
			for _, k := range []string{LimitProduceRecords, LimitProduceBytes, LimitConsumeRequests} {
				limits[k] = nil
			}
		}
		for k, v := range change.Set {
			limits[k] = v // nil goes out as null: back to the default
		}
	}
	body := struct {
		Limits map[string]*int64 `json:"limits"`
	}{limits}
	var u User
	_, err := c.doJSON(ctx, http.MethodPatch, userPath(name), nil, body, &u)
	return u, err
}

// ErrRateLimited matches (errors.Is) an *APIError of a request refused by
// the caller's rate limit (429); RateLimited reads its Retry-After.
var ErrRateLimited = errors.New("rate limited")

// Is makes errors.Is(err, ErrRateLimited) hold for a 429.
func (e *APIError) Is(target error) bool {
	return target == ErrRateLimited && e.Status == http.StatusTooManyRequests
}

// RateLimited reports whether err is a 429 of the caller's rate limit,
// and when the server said to come back (its Retry-After, from the
// bucket's deficit; at least a second). Nothing of a refused request was
// stored: repeating it after that long is safe. A Client retries it by
// itself only under a RetryPolicy (WithRetry).
func RateLimited(err error) (retryAfter time.Duration, ok bool) {
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusTooManyRequests {
		return apiErr.RetryAfter, true
	}
	return 0, false
}
