package topic

import (
	"encoding/json"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// CreateRequest is the body of POST /v1/topics. Pointer fields tell
// "absent" (take the default) from an explicit value.
type CreateRequest struct {
	Name                string `json:"name"`
	Partitions          int    `json:"partitions"`
	RetentionMs         *int64 `json:"retention_ms"`
	VisibilityTimeoutMs *int64 `json:"visibility_timeout_ms"`
	MaxInFlight         *int   `json:"max_in_flight_per_partition"`
	MaxAckedAhead       *int   `json:"max_acked_ahead_per_partition"`
	DedupeWindowMs      *int64 `json:"dedupe_window_ms"`
	// DeliveryDelay ("90s", or milliseconds) or DeliveryDelayMs: the
	// topic's delivery_delay; give at most one.
	DeliveryDelay     *string         `json:"delivery_delay"`
	DeliveryDelayMs   *int64          `json:"delivery_delay_ms"`
	Ordering          *string         `json:"ordering"` // "none" or "group"
	Schema            json.RawMessage `json:"schema"`
	Parent            string          `json:"parent"`
	FanoutDelayMs     *int64          `json:"fanout_delay_ms"`
	FanoutFilter      json.RawMessage `json:"fanout_filter"`
	FanoutFilterScope string          `json:"fanout_filter_scope"`
	FanoutEnvelope    json.RawMessage `json:"fanout_envelope"`
	MaxDeliveries     int             `json:"max_deliveries"`
	DeadLetterTopic   string          `json:"dead_letter_topic"`
	ReplicationFactor *int            `json:"replication_factor"`
	// Tags and AWSAttributes start the topic's maps (ValidateTags,
	// ValidateAWSAttributes); absent or empty: none.
	Tags          map[string]string `json:"tags"`
	AWSAttributes map[string]string `json:"aws_attributes"`
}

// HasLinkFilter reports whether the request names a fan-out filter or
// envelope (not null), which only a create with a parent may.
func (r CreateRequest) HasLinkFilter() bool {
	return (len(r.FanoutFilter) > 0 && string(r.FanoutFilter) != "null") || r.FanoutFilterScope != "" ||
		(len(r.FanoutEnvelope) > 0 && string(r.FanoutEnvelope) != "null")
}

// View is a topic as the API shows it.
type View struct {
	meta.Topic
	Role           string           `json:"role"`
	PartitionStats []PartitionStats `json:"partition_stats,omitempty"`
}

// Roles a topic has in fan-out (docs/http-api.md): "standalone" is the
// reference's word for a topic with neither parent nor children.
const (
	RoleStandalone = "standalone"
	RoleParent     = "parent"
	RoleChild      = "child"
)

// ViewOf is t as the API shows it, without partition stats: credentials
// stripped and its role named.
func ViewOf(t meta.Topic) View {
	t.Remote = t.Remote.Public() // credentials are never shown
	if t.ReplicationFactor == 0 && t.Remote == nil {
		t.ReplicationFactor = 1 // recorded before replication existed: one copy
	}
	if t.Ordering == "" && t.Remote == nil {
		t.Ordering = meta.OrderingNone
	}
	if t.ModifiedAt == 0 {
		t.ModifiedAt = t.CreatedAt // recorded before the field: never changed since
	}
	role := RoleStandalone
	switch {
	case t.Parent != "":
		role = RoleChild
	case len(t.Children) > 0:
		role = RoleParent
	}
	return View{Topic: t, Role: role}
}

// PartitionStats is one entry of partition_stats. Figures are pointers so
// that an unavailable partition is listed with none (not dropped, not 0).
// A partition whose log cannot serve (damaged, fenced, failing disk) is
// listed with "available": false, the figures its directory gives, and
// Error saying why and what the operator can do.
type PartitionStats struct {
	Index     int    `json:"index"`
	OwnerNode string `json:"owner_node"`
	// Replicas and InSync describe a replicated partition (OwnerNode is
	// its leader); absent for a single copy.
	Replicas         []string `json:"replicas,omitempty"`
	InSync           []string `json:"in_sync,omitempty"`
	Available        *bool    `json:"available,omitempty"`
	Error            string   `json:"error,omitempty"`
	Segments         *int     `json:"segments,omitempty"`
	OldestOffset     *uint64  `json:"oldest_offset,omitempty"`
	NextOffset       *uint64  `json:"next_offset,omitempty"`
	HighWatermark    *uint64  `json:"high_watermark,omitempty"`
	SizeBytes        *int64   `json:"size_bytes,omitempty"`
	OldestSegmentAt  *int64   `json:"oldest_segment_at,omitempty"`
	ConsumerFrontier *uint64  `json:"consumer_frontier,omitempty"`
	// InFlight: live leases (records delivered, not yet settled).
	InFlight *int `json:"in_flight,omitempty"`
	// Scheduled: records scheduled for later and not due yet, when the
	// partition's queue is loaded on the node answering (docs/concepts.md,
	// "Scheduled delivery").
	Scheduled *int `json:"scheduled,omitempty"`
	// OldestUnconsumedAt: commit time (unix ms) of the record at the
	// consumer frontier; absent when nothing is unconsumed, or when the
	// partition's log is closed (describe never opens a log).
	OldestUnconsumedAt *int64 `json:"oldest_unconsumed_at_ms,omitempty"`
	// CommitStall: on a replicated partition whose leader has had records
	// waiting past the lag bound without its committed point moving, why
	// (the in-sync followers it waits for, or a set below a majority).
	CommitStall string `json:"commit_stall,omitempty"`
}

// PartitionReport describes a partition as its owner reports it (node RPC
// Stats): never by opening a log.
type PartitionReport struct {
	Partition int
	Available bool
	Stats     storage.Stats
	Frontier  uint64
	Cursors   []CursorPosition
	// InFlight counts the live leases of the partition's lease table (0
	// when its queue is not loaded: then nothing is leased).
	InFlight int
	// OldestUnconsumedAt is the commit time (unix ms) of the record at
	// the consumer frontier, the oldest one not yet settled; 0 when
	// nothing is unconsumed, or when the log is closed (a report never
	// opens a log just to say).
	OldestUnconsumedAt int64
	// CommitStall is why a replicated partition's leader cannot commit
	// ("" when it can; PartitionStats.CommitStall).
	CommitStall string
}

// CursorPosition is a fan-out cursor's place on a parent partition.
type CursorPosition struct {
	Child, Epoch string
	NextOffset   uint64
	State        string // remote children: link state ("" before a send)
	AckedAtMs    int64  // remote children: commit time of the last acknowledged record
	// Remote children: why the link is not running (the last failed
	// send), and the parent offset of the record the target rejects
	// (state "rejected" only).
	StateReason    string
	RejectedOffset *uint64
}
