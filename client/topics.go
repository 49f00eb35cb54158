package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// CreateTopic creates a topic: POST /v1/topics, 201 with the topic.
func (c *Client) CreateTopic(ctx context.Context, req CreateTopicRequest) (Topic, error) {
	if req.Name == "" {
		return Topic{}, errEmptyName
	}
	var t Topic
	_, err := c.doJSON(ctx, http.MethodPost, "/v1/topics", nil, req, &t)
	return t, err
}

// ListTopics returns one page of topics and the token of the next page,
// empty on the last. limit 0 and pageToken "" leave the server's defaults.
func (c *Client) ListTopics(ctx context.Context, limit int, pageToken string) ([]Topic, string, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if pageToken != "" {
		q.Set("page_token", pageToken)
	}
	var page struct {
		Topics        []Topic `json:"topics"`
		NextPageToken string  `json:"next_page_token"`
	}
	if _, err := c.doJSON(ctx, http.MethodGet, "/v1/topics", q, nil, &page); err != nil {
		return nil, "", err
	}
	return page.Topics, page.NextPageToken, nil
}

// GetTopic returns a topic with its partition stats.
func (c *Client) GetTopic(ctx context.Context, name string) (TopicDetail, error) {
	if name == "" {
		return TopicDetail{}, errEmptyName
	}
	var t TopicDetail
	_, err := c.doJSON(ctx, http.MethodGet, topicPath(name), nil, nil, &t)
	return t, err
}

// AlterTopic changes the fields set in req: PATCH /v1/topics/{t}, 200.
func (c *Client) AlterTopic(ctx context.Context, name string, req AlterTopicRequest) (Topic, error) {
	if name == "" {
		return Topic{}, errEmptyName
	}
	var t Topic
	_, err := c.doJSON(ctx, http.MethodPatch, topicPath(name), nil, req, &t)
	return t, err
}

// DeleteTopic deletes a topic: DELETE /v1/topics/{t}, 204.
func (c *Client) DeleteTopic(ctx context.Context, name string) error {
	if name == "" {
		return errEmptyName
	}
	_, err := c.doJSON(ctx, http.MethodDelete, topicPath(name), nil, nil, nil)
	return err
}

// Redrive moves up to max unconsumed records of topic into topic to (max
// 0: the server's default, 1,000): POST /v1/topics/{t}/redrive, and
// returns how many it moved. A record is settled in topic only once its
// copy is durable in to, so a redrive cut short (an error, a crash) can be
// run again: it may duplicate records in to, never lose one.
func (c *Client) Redrive(ctx context.Context, topic, to string, max int) (int, error) {
	if topic == "" || to == "" {
		return 0, errEmptyName
	}
	body := struct {
		To  string `json:"to"`
		Max int    `json:"max,omitempty"`
	}{to, max}
	var out struct {
		Moved int `json:"moved"`
	}
	_, err := c.doJSON(ctx, http.MethodPost, topicPath(topic, "redrive"), nil, body, &out)
	return out.Moved, err
}

// Purge settles every record below each partition's high watermark at the
// moment of the call (POST /v1/topics/{t}/purge, 200) and returns how many
// it settled that were not settled before: leases on them end (their acks
// answer 410), the log is untouched (replay and children see every
// record). It needs ownership of the topic or admin. It is idempotent, so
// it is retried like an ack; a purge whose first answer was lost may then
// report only what its repeat settled (often 0).
func (c *Client) Purge(ctx context.Context, topic string) (int64, error) {
	if topic == "" {
		return 0, errEmptyName
	}
	var res struct {
		Purged int64 `json:"purged"`
	}
	_, err := c.doJSON(ctx, http.MethodPost, topicPath(topic, "purge"), nil, nil, &res)
	return res.Purged, err
}
