package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Ack settles a delivery: POST /v1/topics/{t}/ack?receipt_handle=, 204.
func (c *Client) Ack(ctx context.Context, topic, handle string) error {
	return c.ackCall(ctx, topic, handle, "")
}

// Extend restarts the delivery's visibility timeout (…&extend=true), for a
// consumer that needs longer than the timeout to finish.
func (c *Client) Extend(ctx context.Context, topic, handle string) error {
	return c.ackCall(ctx, topic, handle, "true")
}

// ExtendFor makes the delivery's lease end d from now (…&extend=45s),
// shorter or longer than the topic's visibility timeout: 1 ms .. 12 h, or
// the server answers 400. A d of zero or less is refused here, not sent
// as a nack: to hand the delivery back, call Nack.
func (c *Client) ExtendFor(ctx context.Context, topic, handle string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("extend duration must be positive, got %v (Nack hands a delivery back now)", d)
	}
	return c.ackCall(ctx, topic, handle, d.String())
}

// Nack hands the delivery back at once (…&extend=0: no time left) so
// another consumer gets it without waiting out the visibility timeout.
func (c *Client) Nack(ctx context.Context, topic, handle string) error {
	return c.ackCall(ctx, topic, handle, "0")
}

func (c *Client) ackCall(ctx context.Context, topic, handle, extend string) error {
	if topic == "" {
		return errEmptyName
	}
	if handle == "" {
		return errors.New("receipt handle must not be empty")
	}
	q := url.Values{"receipt_handle": {handle}}
	if extend != "" {
		q.Set("extend", extend)
	}
	_, err := c.do(ctx, request{method: http.MethodPost, path: topicPath(topic, "ack"), query: q})
	return err
}

// AckResult is the outcome for one handle of a batch ack; Status is the
// HTTP status a single ack of that handle would have had.
type AckResult struct {
	ReceiptHandle string `json:"receipt_handle"`
	Status        int    `json:"status"`
}

// AckBatch settles many deliveries in one request:
// POST /v1/topics/{t}/ack {"receipt_handles": [...]}, 200 {"results": [...]}.
// A nil error means the request went through; check each result's Status.
func (c *Client) AckBatch(ctx context.Context, topic string, handles []string) ([]AckResult, error) {
	if topic == "" {
		return nil, errEmptyName
	}
	body, err := ackBatchBody(handles)
	if err != nil {
		return nil, err
	}
	path := topicPath(topic, "ack")
	resp, err := c.do(ctx, request{method: http.MethodPost, path: path, body: body, contentType: "application/json"})
	if err != nil {
		return nil, err
	}
	if resp.status == http.StatusNoContent {
		return nil, nil
	}
	res, err := decodeAckResults(resp.body)
	if err != nil {
		return nil, fmt.Errorf("POST %s: decoding response: %w", path, err)
	}
	return res, nil
}
