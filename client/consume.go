package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ConsumeOptions shape one consume. Zero values are not sent.
type ConsumeOptions struct {
	// Wait long-polls up to this long for a message; sent as a Go duration
	// ("5s", "250ms").
	Wait time.Duration
	// Partition and Offset read a partition by offset (a replay); nil means
	// queue consumption with receipt handles.
	Partition *int
	Offset    *uint64
	// Max asks for up to Max messages; the server then always answers
	// with a {"messages": [...]} list.
	Max int
	// Visibility, when above zero, is how long the leases of this consume
	// live instead of the topic's visibility timeout (1 ms .. 12 h, or the
	// server answers 400); not with Offset.
	Visibility time.Duration
}

// Consume reads messages: GET /v1/topics/{t}/consume?wait=&partition=&offset=&max=&visibility=.
// It returns no messages and a nil error when nothing arrived in time (204).
func (c *Client) Consume(ctx context.Context, topic string, opts ConsumeOptions) ([]Message, error) {
	if topic == "" {
		return nil, errEmptyName
	}
	q := url.Values{}
	if opts.Wait > 0 {
		q.Set("wait", opts.Wait.String())
	}
	if opts.Partition != nil {
		q.Set("partition", strconv.Itoa(*opts.Partition))
	}
	if opts.Offset != nil {
		q.Set("offset", strconv.FormatUint(*opts.Offset, 10))
	}
	if opts.Max > 0 {
		q.Set("max", strconv.Itoa(opts.Max))
	}
	if opts.Visibility > 0 {
		q.Set("visibility", opts.Visibility.String())
	}
	// Two answers: a list under "messages", or a single message object,
	// which never has a "messages" key.
	resp, err := c.do(ctx, request{method: http.MethodGet, path: topicPath(topic, "consume"), query: q})
	if err != nil {
		return nil, err
	}
	if resp.status == http.StatusNoContent {
		return nil, nil
	}
	msgs, err := decodeMessages(resp.body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: decoding response: %w", topicPath(topic, "consume"), err)
	}
	return msgs, nil
}

// decodeMessages decodes a consume answer: in one pass when it has the
// server's plain shape (fastMessages checks the grammar of what it
// takes), else validated and decoded by encoding/json, for its words
// about what is wrong.
func decodeMessages(body []byte) ([]Message, error) {
	if msgs, ok := fastMessages(body); ok {
		return msgs, nil
	}
	if !json.Valid(body) {
		var raw json.RawMessage
		return nil, json.Unmarshal(body, &raw)
	}
	return slowMessages(body)
}

// slowMessages decodes a consume answer with encoding/json.
func slowMessages(body []byte) ([]Message, error) {
	var list struct {
		Messages *[]Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	if list.Messages != nil {
		return *list.Messages, nil
	}
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	return []Message{m}, nil
}
