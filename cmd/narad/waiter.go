package main

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/narad-io/narad/client"
)

// waiter tells the user, once per outage, that a command is waiting for
// its node rather than hanging: the client's retries (client.RetryPolicy)
// call onRetry before each pause.
type waiter struct {
	a      *app
	server string
	budget time.Duration

	mu   sync.Mutex
	last time.Time // the latest retry of any call
}

// outageGap is how long without a retry ends an outage: longer than the
// client's largest backoff pause, so one outage seen by several calls (the
// partitions of "sub --peek", a bench's producers) gets one line, and a
// second restart later gets its own.
const outageGap = 5 * time.Second

func (w *waiter) onRetry(e client.RetryEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	fresh := w.last.IsZero() || now.Sub(w.last) > outageGap
	w.last = now
	if !fresh || e.Attempt != 1 {
		return
	}
	fmt.Fprintf(w.a.stderr, "narad: waiting for the node at %s (%s); retrying for up to %s\n",
		w.server, waitReason(e), formatMs(w.budget.Milliseconds()))
}

// waitReason says why a try failed, in the words of the line above.
func waitReason(e client.RetryEvent) string {
	if e.Refused() {
		return "starting: " + rootCause(e.Err)
	}
	var apiErr *client.APIError
	if errors.As(e.Err, &apiErr) {
		what := "unavailable"
		if apiErr.Status == http.StatusTooManyRequests {
			what = "busy"
		}
		return fmt.Sprintf("%s: %s", what, apiErr.Message)
	}
	return "connection lost: " + rootCause(e.Err)
}

// rootCause is the innermost error's text: "connection refused", not
// "Get \"http://…\": dial tcp 127.0.0.1:7942: connect: connection refused".
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
