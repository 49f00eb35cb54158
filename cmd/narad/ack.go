package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/narad-io/narad/client"
)

// ackBackoff paces the re-acks of handles whose own answer in a batch
// was transient. It is the client's schedule (client.Backoff): a variable
// so tests need not wait.
var ackBackoff = client.Backoff{}

// ackHandles acknowledges handles — one request for one handle, a batch
// otherwise. A request that fails as a whole has already been retried by
// the client (its RetryPolicy: a node restarting, a 503); here, up to
// tries attempts, only the handles whose own answer in a batch was
// transient are sent again: a 503 "acked-ahead window full" clears once
// the record blocking the partition's frontier is settled, so giving up
// at once would leave the lease to expire and the record to be delivered
// again. fail is called once for each handle that could not be
// acknowledged, except those still pending when ctx ends; retried counts
// the handle retries made.
func ackHandles(ctx context.Context, c *client.Client, topic string, handles []string, tries int,
	fail func(handle string, err error)) (failed, retried int) {
	switch len(handles) {
	case 0:
		return 0, 0
	case 1:
		if err := c.Ack(ctx, topic, handles[0]); err != nil {
			fail(handles[0], err)
			return 1, 0
		}
		return 0, 0
	}
	pending := handles
	for try := 0; ; try++ {
		results, err := c.AckBatch(ctx, topic, pending)
		if err != nil {
			for _, h := range pending {
				fail(h, err)
			}
			return failed + len(pending), retried
		}
		if allAcked(pending, results) {
			return failed, retried
		}
		var again []string
		answered := make(map[string]bool, len(results))
		for _, r := range results {
			answered[r.ReceiptHandle] = true
			switch {
			case r.Status >= 200 && r.Status < 300:
			case (r.Status == http.StatusTooManyRequests || r.Status >= 500) && try < tries-1:
				again = append(again, r.ReceiptHandle)
			default:
				fail(r.ReceiptHandle, fmt.Errorf("%s (HTTP %d)", http.StatusText(r.Status), r.Status))
				failed++
			}
		}
		for _, h := range pending {
			if !answered[h] {
				fail(h, errors.New("the server did not answer for this handle"))
				failed++
			}
		}
		if len(again) == 0 {
			return failed, retried
		}
		if client.Sleep(ctx, ackBackoff.Delay(try)) != nil { // cancelled: the caller is stopping anyway
			return failed + len(again), retried
		}
		retried += len(again)
		pending = again
	}
}

// allAcked reports whether results settle every one of handles, in order
// — the usual answer, told without building a set of the handles.
func allAcked(handles []string, results []client.AckResult) bool {
	if len(results) != len(handles) {
		return false
	}
	for i, r := range results {
		if r.ReceiptHandle != handles[i] || r.Status < 200 || r.Status > 299 {
			return false
		}
	}
	return true
}
