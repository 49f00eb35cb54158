package awsapi

import (
	"net/http"
	"net/url"
)

// topicView is what the edge reads of a /v1 topic record
// (GET /v1/topics/{topic}).
type topicView struct {
	Name                string            `json:"name"`
	Partitions          int               `json:"partitions"`
	RetentionMs         int64             `json:"retention_ms"`
	VisibilityTimeoutMs int64             `json:"visibility_timeout_ms"`
	DedupeWindowMs      int64             `json:"dedupe_window_ms"`
	DeliveryDelayMs     int64             `json:"delivery_delay_ms"`
	Ordering            string            `json:"ordering"`
	Parent              string            `json:"parent"`
	Children            []string          `json:"children"`
	MaxDeliveries       int               `json:"max_deliveries"`
	DeadLetterTopic     string            `json:"dead_letter_topic"`
	CreatedAt           int64             `json:"created_at"`
	ModifiedAt          int64             `json:"modified_at"`
	Tags                map[string]string `json:"tags"`
	AWSAttributes       map[string]string `json:"aws_attributes"`
	PartitionStats      []struct {
		HighWatermark    *uint64 `json:"high_watermark"`
		ConsumerFrontier *uint64 `json:"consumer_frontier"`
		InFlight         *int    `json:"in_flight"`
		Scheduled        *int    `json:"scheduled"`
	} `json:"partition_stats"`
}

// counts are ApproximateNumberOfMessages, ...NotVisible and ...Delayed:
// the backlog not leased, the leased, and the scheduled (docs/aws.md).
func (t *topicView) counts() (visible, inFlight, delayed uint64) {
	for _, s := range t.PartitionStats {
		var backlog uint64
		if s.HighWatermark != nil && s.ConsumerFrontier != nil && *s.HighWatermark > *s.ConsumerFrontier {
			backlog = *s.HighWatermark - *s.ConsumerFrontier
		}
		var lf uint64
		if s.InFlight != nil {
			lf = uint64(*s.InFlight)
		}
		if s.Scheduled != nil {
			delayed += uint64(*s.Scheduled)
		}
		inFlight += lf
		if backlog > lf {
			visible += backlog - lf
		}
	}
	return visible, inFlight, delayed
}

func (t *topicView) modified() int64 {
	if t.ModifiedAt != 0 {
		return t.ModifiedAt
	}
	return t.CreatedAt
}

// topic reads a topic's record; notFound is what its absence means to
// the action.
func (e *Edge) topic(c *call, name string, notFound errorKind) (*topicView, error) {
	a, err := e.v1(c, http.MethodGet, "/v1/topics/"+name, nil, nil)
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, a.refusal(c.service, notFound)
	}
	var t topicView
	if err := a.decode(&t); err != nil {
		return nil, err
	}
	return &t, nil
}

// patchTopic changes a topic's fields.
func (e *Edge) patchTopic(c *call, name string, fields map[string]any, notFound errorKind) error {
	a, err := e.v1(c, http.MethodPatch, "/v1/topics/"+name, nil, fields)
	if err != nil {
		return err
	}
	if !a.ok() {
		return a.refusal(c.service, notFound)
	}
	return nil
}

// allTopics lists every topic's record (paging through /v1).
func (e *Edge) allTopics(c *call) ([]topicView, error) {
	var out []topicView
	token := ""
	for {
		q := url.Values{"limit": {"1000"}}
		if token != "" {
			q.Set("page_token", token)
		}
		a, err := e.v1(c, http.MethodGet, "/v1/topics", q, nil)
		if err != nil {
			return nil, err
		}
		if !a.ok() {
			return nil, a.refusal(c.service, errQueueDoesNotExist)
		}
		var page struct {
			Topics []topicView `json:"topics"`
			Next   string      `json:"next_page_token"`
		}
		if err := a.decode(&page); err != nil {
			return nil, err
		}
		out = append(out, page.Topics...)
		if page.Next == "" {
			return out, nil
		}
		token = page.Next
	}
}
