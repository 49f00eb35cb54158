package main

import (
	"context"
	"errors"
	"time"

	"github.com/narad-io/narad/client"
)

// retryBackoff is the first pause of pause's schedule; it doubles each
// time. A variable so tests need not wait.
var retryBackoff = 100 * time.Millisecond

// maxRetryWait caps a server's Retry-After so one answer cannot park a
// command's loop (bench's workers) for minutes.
const maxRetryWait = 5 * time.Second

// pause waits before try i+1 of a loop of the CLI's own (bench's workers;
// single calls are retried by the client's RetryPolicy): the client's one
// Backoff schedule, or the server's Retry-After when that is longer.
func pause(ctx context.Context, i int, cause error) error {
	var retryAfter time.Duration
	var apiErr *client.APIError
	if errors.As(cause, &apiErr) {
		retryAfter = min(apiErr.RetryAfter, maxRetryWait)
	}
	b := client.Backoff{Initial: retryBackoff, Max: maxRetryWait}
	if retryBackoff <= 0 {
		return client.Sleep(ctx, retryAfter)
	}
	return client.Sleep(ctx, b.Pause(i, retryAfter))
}
