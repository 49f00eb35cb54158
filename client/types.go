package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Topic is a topic's configuration as the server reports it.
type Topic struct {
	Name                      string          `json:"name"`
	Partitions                int             `json:"partitions"`
	RetentionMs               int64           `json:"retention_ms"`
	VisibilityTimeoutMs       int64           `json:"visibility_timeout_ms"`
	MaxInFlightPerPartition   int             `json:"max_in_flight_per_partition"`
	MaxAckedAheadPerPartition int             `json:"max_acked_ahead_per_partition"`
	Schema                    json.RawMessage `json:"schema,omitempty"`
	CreatedAt                 Time            `json:"created_at"`
	Owner                     string          `json:"owner,omitempty"`
	Role                      string          `json:"role,omitempty"`
	Parent                    string          `json:"parent,omitempty"`
	Children                  []string        `json:"children,omitempty"`
	AttachEpoch               string          `json:"attach_epoch,omitempty"`
	// AttachOffsets is kept raw: the contract does not fix its shape.
	AttachOffsets json.RawMessage `json:"attach_offsets,omitempty"`
	FanoutDelayMs int64           `json:"fanout_delay_ms,omitempty"`
	// FanoutEnvelope, on an enveloped child: how its link wraps each copy.
	FanoutEnvelope *LinkEnvelope `json:"fanout_envelope,omitempty"`
	// DeliveryDelayMs schedules every record produced without a delay of
	// its own that long after it is accepted (0: none; docs/concepts.md,
	// "Scheduled delivery").
	DeliveryDelayMs int64 `json:"delivery_delay_ms,omitempty"`
	// MaxDeliveries (0: off) and DeadLetterTopic are the dead-letter
	// policy (an extension).
	MaxDeliveries   int    `json:"max_deliveries,omitempty"`
	DeadLetterTopic string `json:"dead_letter_topic,omitempty"`
	// DedupeWindowMs is the idempotent-produce window (0: off): within it
	// the topic stores at most one record per MsgID.
	DedupeWindowMs int64 `json:"dedupe_window_ms,omitempty"`
	// Ordering is "none" or "group": with "group", records of one key are
	// delivered one at a time in order (an extension; message groups).
	Ordering string `json:"ordering,omitempty"`
	// ReplicationFactor is how many copies of each partition the topic
	// keeps, on distinct nodes (an extension; 1: a single copy).
	ReplicationFactor int `json:"replication_factor,omitempty"`
	// ModifiedAt is when a change of the topic last succeeded; CreatedAt
	// until one has (zero from a server that does not report it).
	ModifiedAt Time `json:"modified_at"`
	// Tags are the topic's tags, and AWSAttributes the protocol attributes
	// an SQS/SNS edge keeps for it (extensions; nil when none).
	Tags          map[string]string `json:"tags,omitempty"`
	AWSAttributes map[string]string `json:"aws_attributes,omitempty"`

	raw json.RawMessage // the object as the server sent it
}

// Raw is the topic object exactly as the server sent it (for a
// TopicDetail or an AttachResult, that whole answer), so a tool that
// prints JSON prints the API's JSON, fields this client does not know and
// timestamps as they came included. It is nil for a Topic not decoded
// from an answer.
func (t Topic) Raw() json.RawMessage { return t.raw }

// UnmarshalJSON decodes a topic and keeps its bytes for Raw.
func (t *Topic) UnmarshalJSON(b []byte) error {
	type plain Topic // without this method, so the decode does not recurse
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	t.raw = bytes.Clone(b)
	return nil
}

// RetentionForever is the retention_ms that keeps records forever.
const RetentionForever int64 = 0

// TopicDetail is GET /v1/topics/{t}: the topic plus per-partition stats.
type TopicDetail struct {
	Topic
	PartitionStats []PartitionStats `json:"partition_stats"`
}

// UnmarshalJSON decodes the topic and its stats; without it the embedded
// Topic's method would decode the topic alone and drop the stats.
func (d *TopicDetail) UnmarshalJSON(b []byte) error {
	type plainTopic Topic
	var wire struct {
		plainTopic
		PartitionStats []PartitionStats `json:"partition_stats"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return err
	}
	d.Topic, d.PartitionStats = Topic(wire.plainTopic), wire.PartitionStats
	d.raw = bytes.Clone(b)
	return nil
}

// PartitionStats describes one partition of a topic.
type PartitionStats struct {
	Index            int    `json:"index"`
	OwnerNode        string `json:"owner_node"`
	Segments         int    `json:"segments"`
	OldestOffset     uint64 `json:"oldest_offset"`
	NextOffset       uint64 `json:"next_offset"`
	HighWatermark    uint64 `json:"high_watermark"`
	SizeBytes        int64  `json:"size_bytes"`
	OldestSegmentAt  Time   `json:"oldest_segment_at"`
	ConsumerFrontier uint64 `json:"consumer_frontier"`
	// Available is nil when the server did not say.
	Available *bool `json:"available,omitempty"`
	// Replicas and InSync are a replicated topic's (OwnerNode is the
	// partition's leader): the nodes holding a copy, and those holding
	// every acknowledged record. Empty for a single copy.
	Replicas []string `json:"replicas,omitempty"`
	InSync   []string `json:"in_sync,omitempty"`
	// CommitStall, on a replicated partition, says why its leader cannot
	// commit once records have waited past its lag bound (which in-sync
	// followers it waits for); empty while it commits.
	CommitStall string `json:"commit_stall,omitempty"`
	// Scheduled counts the partition's records not due yet (scheduled
	// delivery). Only the node serving the partition knows it, once a
	// consumer has touched the partition there: 0 may mean "not known".
	Scheduled int64 `json:"scheduled,omitempty"`
}

// CreateTopicRequest is POST /v1/topics. Zero fields are left out so the
// server applies its defaults, except RetentionMs: there 0 is a setting
// of its own (RetentionForever), so it is a pointer and nil means "the
// server's default" (new(int64(0)) keeps records forever).
type CreateTopicRequest struct {
	Name                      string          `json:"name"`
	Partitions                int             `json:"partitions,omitempty"`
	RetentionMs               *int64          `json:"retention_ms,omitempty"`
	VisibilityTimeoutMs       int64           `json:"visibility_timeout_ms,omitempty"`
	MaxInFlightPerPartition   int             `json:"max_in_flight_per_partition,omitempty"`
	MaxAckedAheadPerPartition int             `json:"max_acked_ahead_per_partition,omitempty"`
	Schema                    json.RawMessage `json:"schema,omitempty"`
	Parent                    string          `json:"parent,omitempty"`
	FanoutDelayMs             int64           `json:"fanout_delay_ms,omitempty"`
	// DeliveryDelayMs: the delay of every record produced without one of
	// its own, 0 (none) .. a year (Topic.DeliveryDelayMs).
	DeliveryDelayMs int64 `json:"delivery_delay_ms,omitempty"`
	// FanoutFilter and FanoutFilterScope, with Parent: the link copies
	// only the records the filter matches (see AttachRequest.Filter).
	FanoutFilter      json.RawMessage `json:"fanout_filter,omitempty"`
	FanoutFilterScope string          `json:"fanout_filter_scope,omitempty"`
	// FanoutEnvelope, with Parent: the link wraps each copy in it (see
	// AttachRequest.Envelope).
	FanoutEnvelope *LinkEnvelope `json:"fanout_envelope,omitempty"`
	// MaxDeliveries > 0 dead-letters a record into DeadLetterTopic once
	// its deliveries are used up (an extension; both or neither).
	MaxDeliveries   int    `json:"max_deliveries,omitempty"`
	DeadLetterTopic string `json:"dead_letter_topic,omitempty"`
	// DedupeWindowMs: 0 (off) or 1000..86400000.
	DedupeWindowMs int64 `json:"dedupe_window_ms,omitempty"`
	// Ordering: "none" (the default when empty) or "group".
	Ordering string `json:"ordering,omitempty"`
	// ReplicationFactor: 1..5 copies of each partition, at most the live
	// nodes; 0 takes the default (1).
	ReplicationFactor int `json:"replication_factor,omitempty"`
	// Tags: at most 50; keys 1..128 bytes, not starting with "aws:";
	// values 0..256 bytes. AWSAttributes: protocol attributes of the
	// SQS/SNS edge, keys of a closed set (docs/http-api.md).
	Tags          map[string]string `json:"tags,omitempty"`
	AWSAttributes map[string]string `json:"aws_attributes,omitempty"`
}

// AlterTopicRequest is PATCH /v1/topics/{t}. Only non-nil fields are sent,
// so a zero can be set on purpose. Schema is sent when not empty; set it to
// json.RawMessage("null") to remove a schema.
type AlterTopicRequest struct {
	Partitions                *int            `json:"partitions,omitempty"`
	RetentionMs               *int64          `json:"retention_ms,omitempty"`
	VisibilityTimeoutMs       *int64          `json:"visibility_timeout_ms,omitempty"`
	MaxInFlightPerPartition   *int            `json:"max_in_flight_per_partition,omitempty"`
	MaxAckedAheadPerPartition *int            `json:"max_acked_ahead_per_partition,omitempty"`
	Schema                    json.RawMessage `json:"schema,omitempty"`
	FanoutDelayMs             *int64          `json:"fanout_delay_ms,omitempty"`
	// DeliveryDelayMs: as CreateTopicRequest's; 0 turns it off.
	DeliveryDelayMs *int64 `json:"delivery_delay_ms,omitempty"`
	// MaxDeliveries 0 turns the dead-letter policy off; DeadLetterTopic
	// "" clears the dead-letter topic (with MaxDeliveries 0).
	MaxDeliveries   *int    `json:"max_deliveries,omitempty"`
	DeadLetterTopic *string `json:"dead_letter_topic,omitempty"`
	DedupeWindowMs  *int64  `json:"dedupe_window_ms,omitempty"` // 0 turns it off
	Ordering        *string `json:"ordering,omitempty"`         // "none" or "group"
	// ReplicationFactor raises or lowers the copies of each partition
	// (1..5, at most the live nodes).
	ReplicationFactor *int `json:"replication_factor,omitempty"`
	// Tags and AWSAttributes, when not nil, replace the topic's whole
	// map: an empty, non-nil map (map[string]string{}) removes them all.
	Tags          map[string]string `json:"tags,omitzero"`
	AWSAttributes map[string]string `json:"aws_attributes,omitzero"`
}

// Time is a timestamp sent as RFC 3339 text or as a Unix time number (see
// UnixTime for seconds versus milliseconds); all decode, and it encodes as
// RFC 3339. null, "" and 0 are the zero Time.
type Time struct{ time.Time }

// UnmarshalJSON accepts RFC 3339 text, a Unix time number (seconds or
// milliseconds, see UnixTime), "" and null.
func (t *Time) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		t.Time = time.Time{}
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			t.Time = time.Time{}
			return nil
		}
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("timestamp %q: %w", s, err)
		}
		t.Time = at
	default:
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("timestamp %s: want RFC 3339 text or a Unix time", b)
		}
		t.Time = UnixTime(n)
	}
	return nil
}

// UnixTime converts a Unix timestamp number to a time, telling seconds from
// milliseconds by size: the server currently sends seconds, the contract
// does not pin the unit, and the two cannot be confused for any date after
// 1973 (1e11 seconds is the year 5138; 1e11 milliseconds is March 1973).
// 0 is the zero time.
func UnixTime(n int64) time.Time {
	switch {
	case n == 0:
		return time.Time{}
	case n < 1e11 && n > -1e11:
		return time.Unix(n, 0).UTC()
	default:
		return time.UnixMilli(n).UTC()
	}
}

// MarshalJSON writes RFC 3339 text, or null for the zero Time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.Time.Format(time.RFC3339Nano))
}
