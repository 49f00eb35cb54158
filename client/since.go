package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Reading by time (docs/http-api.md, "GET /v1/topics/{topic}/offsets" and
// "GET /v1/topics/{topic}/replay"). A time is given as the server reads
// it: an RFC 3339 time, Unix milliseconds, or a duration meaning that long
// before now ("10m", "2h", "7d"); TimeOf turns a time.Time into one.

// TimeOf is t as a time parameter: Unix milliseconds.
func TimeOf(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// OffsetsAtTime is GET /v1/topics/{t}/offsets: per partition, the first
// offset whose commit time is at or after the time.
type OffsetsAtTime struct {
	Topic      string            `json:"topic"`
	TimeMs     int64             `json:"time_ms"`
	Partitions []PartitionOffset `json:"partitions"`
}

// PartitionOffset is one partition's offset at the time, or (when every
// partition was asked) why it could not answer now.
type PartitionOffset struct {
	Partition int     `json:"partition"`
	Offset    *uint64 `json:"offset,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// OffsetsAt asks every partition (or only *partition) for its first
// offset at or after at. It reads the partitions' indexes only: no lease,
// no change.
func (c *Client) OffsetsAt(ctx context.Context, topic, at string, partition *int) (OffsetsAtTime, error) {
	if topic == "" {
		return OffsetsAtTime{}, errEmptyName
	}
	q := url.Values{"time": {at}}
	if partition != nil {
		q.Set("partition", strconv.Itoa(*partition))
	}
	var v OffsetsAtTime
	_, err := c.doJSON(ctx, http.MethodGet, topicPath(topic, "offsets"), q, nil, &v)
	return v, err
}

// SinceOptions shape a replay by time. Zero values are not sent.
type SinceOptions struct {
	// Since is where the replay starts; required unless PageToken is set
	// (the token holds its time).
	Since string
	// Partition reads one partition; nil merges every partition in
	// commit-time order (ties: partition, then offset).
	Partition *int
	// Max is records a page, 1..1000 (0: the server's default, 100).
	Max int
	// PageToken continues where an earlier page stopped (its
	// NextPageToken).
	PageToken string
}

// SincePage is one page of a replay by time.
type SincePage struct {
	Messages []Message `json:"messages"`
	// NextPageToken continues after this page; it is always set, also
	// once caught up (it then reads what is committed later).
	NextPageToken string `json:"next_page_token"`
	// CaughtUp says every partition was read to its end: the next page
	// would hold only records committed after this one was read.
	CaughtUp bool `json:"caught_up"`
}

// ReplaySince reads one page of the records committed at or after
// opts.Since: GET /v1/topics/{t}/replay. Messages have no receipt handle;
// nothing is leased or changed.
func (c *Client) ReplaySince(ctx context.Context, topic string, opts SinceOptions) (SincePage, error) {
	if topic == "" {
		return SincePage{}, errEmptyName
	}
	q := url.Values{}
	if opts.Since != "" {
		q.Set("since", opts.Since)
	}
	if opts.Partition != nil {
		q.Set("partition", strconv.Itoa(*opts.Partition))
	}
	if opts.Max > 0 {
		q.Set("max", strconv.Itoa(opts.Max))
	}
	if opts.PageToken != "" {
		q.Set("page_token", opts.PageToken)
	}
	resp, err := c.do(ctx, request{method: http.MethodGet, path: topicPath(topic, "replay"), query: q})
	if err != nil {
		return SincePage{}, err
	}
	var page SincePage
	if err := json.Unmarshal(resp.body, &page); err != nil {
		return SincePage{}, fmt.Errorf("GET %s: decoding response: %w", topicPath(topic, "replay"), err)
	}
	return page, nil
}

// ReplaySinceAll yields every record committed at or after opts.Since,
// page after page, until a page is caught up (the records there when it
// was read), or the first error, which it yields last. Stop ranging to
// stop early.
func (c *Client) ReplaySinceAll(ctx context.Context, topic string, opts SinceOptions) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		for {
			page, err := c.ReplaySince(ctx, topic, opts)
			if err != nil {
				yield(Message{}, err)
				return
			}
			for _, m := range page.Messages {
				if !yield(m, nil) {
					return
				}
			}
			if page.CaughtUp || page.NextPageToken == "" {
				return
			}
			if len(page.Messages) == 0 && page.NextPageToken == opts.PageToken {
				// Not caught up and no further: a server bug, not a loop.
				yield(Message{}, fmt.Errorf("GET %s: a page with no records and the same token", topicPath(topic, "replay")))
				return
			}
			opts.PageToken = page.NextPageToken
		}
	}
}
