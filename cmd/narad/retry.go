package main

import (
	"context"
	"errors"
	"time"

	"github.com/narad-io/narad/client"
)

// retryBackoff is the first pause between tries; it doubles each time. A
// variable so tests need not wait.
var retryBackoff = 100 * time.Millisecond

// maxRetryWait caps a server's Retry-After so one answer cannot park the
// CLI for minutes.
const maxRetryWait = 5 * time.Second

// retry calls fn up to tries times while it fails with a transient error
// (see client.IsTransient), pausing between tries.
func retry(ctx context.Context, tries int, fn func() error) error {
	var err error
	for i := range tries {
		if err = fn(); err == nil || !client.IsTransient(err) || i == tries-1 {
			return err
		}
		if err := pause(ctx, i, err); err != nil {
			return err
		}
	}
	return err
}

// pause waits before try i+1: exponential backoff, or the server's
// Retry-After when that is longer.
func pause(ctx context.Context, i int, cause error) error {
	d := retryBackoff << i
	var apiErr *client.APIError
	if errors.As(cause, &apiErr) && apiErr.RetryAfter > d {
		d = min(apiErr.RetryAfter, maxRetryWait)
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
