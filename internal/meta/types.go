package meta

import (
	"encoding/json"
	"slices"
)

// MaxChildren is the most fan-out children one parent may have
// (docs/concepts.md, "Fan-out children").
const MaxChildren = 108

// delayRetentionFloorMs is the margin a delay child's parent must retain
// beyond the delay: retention ≥ delay + 1 h, or 0 (keep forever).
const delayRetentionFloorMs = 3_600_000

// Topic orderings (Topic.Ordering).
const (
	OrderingNone  = "none"
	OrderingGroup = "group"
)

// Topic is a topic's metadata record. JSON names are the HTTP API's.
//
// The link fields (Parent, AttachEpoch, AttachOffsets, FanoutDelayMs,
// Children) are owned by the metastore: they change only through attach,
// detach and delete commands, which keep both ends of a link consistent.
type Topic struct {
	Name                string          `json:"name"`
	Partitions          int             `json:"partitions"`
	RetentionMs         int64           `json:"retention_ms"`
	VisibilityTimeoutMs int64           `json:"visibility_timeout_ms"`
	MaxInFlight         int             `json:"max_in_flight_per_partition"`
	MaxAckedAhead       int             `json:"max_acked_ahead_per_partition"`
	Schema              json.RawMessage `json:"schema,omitempty"`
	// MaxDeliveries (0: off) and DeadLetterTopic are the dead-letter
	// policy (deadletter.go): a record delivered MaxDeliveries times whose
	// last lease ends unsettled is committed to DeadLetterTopic, then
	// settled here.
	MaxDeliveries   int    `json:"max_deliveries,omitempty"`
	DeadLetterTopic string `json:"dead_letter_topic,omitempty"`
	CreatedAt       int64  `json:"created_at"`      // unix seconds
	Owner           string `json:"owner,omitempty"` // creating user's name, for display
	// OwnerID is the creating user's User.ID, bound by the FSM when the
	// create applies (a proposer's value is ignored and never sent): the
	// owner is this incarnation of the name, not whoever holds it later.
	OwnerID uint64 `json:"owner_id,omitempty"`

	// Fan-out link, set when this topic is a child.
	Parent        string   `json:"parent,omitempty"`
	AttachEpoch   string   `json:"attach_epoch,omitempty"`
	AttachOffsets []uint64 `json:"attach_offsets,omitempty"`
	FanoutDelayMs int64    `json:"fanout_delay_ms,omitempty"`
	Children      []string `json:"children,omitempty"` // sorted

	// FanoutFilter, on a child whose link has a filter (docs/concepts.md,
	// "Fan-out children"): the filter policy as package filter's canonical
	// JSON, and the scope it matches ("headers", the default when empty,
	// or "payload"). The link copies only the records it matches. Absent
	// on a link without one, and on every record written before filters
	// existed: no filter.
	FanoutFilter      json.RawMessage `json:"fanout_filter,omitempty"`
	FanoutFilterScope string          `json:"fanout_filter_scope,omitempty"`

	// FanoutEnvelope, on a child whose link wraps its copies (linkfilter.go,
	// "envelopes"): each copy's payload is the source record in that
	// envelope. Absent on a link without one, and on every record written
	// before envelopes existed: copies as published.
	FanoutEnvelope *LinkEnvelope `json:"fanout_envelope,omitempty"`

	// Remote, set on a remote child (docs/concepts.md, "Fan-out children"): a
	// link to a topic of another cluster, with no partitions here. Such a
	// record exists only while attached, is not a topic anyone can produce to
	// or consume from, and its credentials are never shown
	// (RemoteTarget.Public).
	Remote *RemoteTarget `json:"remote,omitempty"`

	// Incarnation tells this life of the name from earlier ones: the Raft
	// index of the create command, set by the FSM (whatever the command
	// carried), never changed afterwards. Ingress WAL records carry it, so
	// records of a deleted topic are never committed into a re-created one.
	// 0 means a topic created before incarnations existed: it matches any.
	Incarnation uint64 `json:"incarnation,omitempty"`

	// DedupeWindowMs (0: off) is the idempotent-produce window
	// (docs/concepts.md, "Producer ids and deduplication"): within it a
	// partition owner stores at most one record per producer msg_id
	// (package hosted).
	DedupeWindowMs int64 `json:"dedupe_window_ms"`

	// DeliveryDelayMs (0: none) is the due time, after its commit, of
	// every record that names none of its own (docs/concepts.md,
	// "Scheduled delivery"): SQS's queue DelaySeconds.
	DeliveryDelayMs int64 `json:"delivery_delay_ms,omitempty"`

	// Ordering is how queue consumers are served (docs/concepts.md,
	// "Message groups"): OrderingGroup, or "" for OrderingNone (stored
	// so; shown as "none"). With "group", a keyed record is offered only
	// once every earlier record of its key is settled (package lease).
	Ordering string `json:"ordering,omitempty"`

	// ReplicationFactor is how many copies each partition keeps
	// (docs/replication.md); 0 is a topic recorded
	// before replication existed and means 1.
	ReplicationFactor int `json:"replication_factor,omitempty"`

	// Tags are the owner's labels of the topic (SQS queue tags, SNS
	// resource tags); AWSAttributes are the attributes the SQS/SNS edge
	// keeps that the topic has no field of its own for. Both are replaced
	// whole by an update and absent while empty; the API layer holds
	// their limits (package topic), the metastore stores what it is given.
	Tags          map[string]string `json:"tags,omitempty"`
	AWSAttributes map[string]string `json:"aws_attributes,omitempty"`

	// ModifiedAt (unix seconds) is when an update last changed the record
	// through the API, stamped by the proposer like CreatedAt; 0 on a
	// record written before the field, which reads as CreatedAt.
	ModifiedAt int64 `json:"modified_at,omitempty"`

	// Version is the Raft index of the last change to this record; it is
	// stored beside the JSON, not in it, and serves compare-and-swap updates.
	Version uint64 `json:"-"`
}

// OwnedBy reports whether the user named user, of ID id, is the topic's
// owner. The name alone is not enough: a user deleted and created again
// has a new ID and owns nothing of the old one's. A topic recorded before
// IDs existed (OwnerID 0) is owned by its name while that user is still
// the legacy one (ID 0, created before the upgrade and never deleted since).
func (t Topic) OwnedBy(user string, id uint64) bool {
	return t.Owner != "" && t.Owner == user && t.OwnerID == id
}

// RemoteTarget is where a remote child copies to: another cluster's topic,
// reached through its batch produce with these credentials.
type RemoteTarget struct {
	URL      string `json:"url"`
	Topic    string `json:"topic"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// Public is the target without its credentials: what any API may show.
func (r *RemoteTarget) Public() *RemoteTarget {
	if r == nil {
		return nil
	}
	return &RemoteTarget{URL: r.URL, Topic: r.Topic}
}

// Assignment places one partition. Owner serves it now; Target, when set, is
// where a move will take it. An empty Owner means not placed yet (placement
// may be deferred: a child created with its parent is anti-affine to it).
//
// A partition of a replicated topic (Topic.ReplicationFactor > 1) also
// has Replicas (distinct nodes, Owner among them: Owner is the leader),
// InSync (the in-sync set: the leader and the followers that hold every
// acknowledged record; package replica says when it changes), the leader
// epoch (raised by every leader change) and EpochStarts (where each
// epoch's leader began writing, ascending: followers cut a divergent tail
// by it). All four are empty on a single-copy partition, whose record is
// byte for byte what it was before replication existed.
//
// Leaving, when set, names the copy the controller is moving off the
// partition (a rebalance): it was set by the SetReplicas that added its
// replacement, so Replicas holds one copy more than the copies that stay,
// and it is cleared by the SetReplicas that removes the copy (or calls
// the move off). Empty otherwise, and absent from the JSON: a record
// written before the field reads the same.
type Assignment struct {
	Topic       string       `json:"topic"`
	Partition   int          `json:"partition"`
	Owner       string       `json:"owner"`
	Target      string       `json:"target,omitempty"`
	Replicas    []string     `json:"replicas,omitempty"`
	InSync      []string     `json:"in_sync,omitempty"`
	LeaderEpoch uint64       `json:"leader_epoch,omitempty"`
	EpochStarts []EpochStart `json:"epoch_starts,omitempty"`
	Leaving     string       `json:"leaving,omitempty"`
	// InSyncVersion counts the in-sync changes a leader's word applied
	// (every SetInSync that carries From, even one that restates the
	// set): a proposal names the version it decided on, so one decided
	// before any later change of the same leader's — from a process of
	// it that has since restarted, or overtaken in flight — changes
	// nothing. Absent from the JSON while 0.
	InSyncVersion uint64 `json:"in_sync_version,omitempty"`
}

// EpochStart says that the leader of Epoch wrote its first record at
// Offset: every record below Offset it held when it took over, and any
// other replica's records from earlier epochs at or past Offset were never
// acknowledged (package replica cuts them).
type EpochStart struct {
	Epoch  uint64 `json:"epoch"`
	Offset uint64 `json:"offset"`
}

// Equal reports whether two placements are the same, replicas included.
func (a Assignment) Equal(b Assignment) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.Owner == b.Owner && a.Target == b.Target &&
		slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.InSync, b.InSync) &&
		a.LeaderEpoch == b.LeaderEpoch && slices.Equal(a.EpochStarts, b.EpochStarts) && a.Leaving == b.Leaving &&
		a.InSyncVersion == b.InSyncVersion
}

// Replicated reports whether the partition has more than one copy.
func (a Assignment) Replicated() bool { return len(a.Replicas) > 1 }

// Majority is how many of n replicas make a quorum: a record is
// acknowledged once it is durable on at least this many.
func Majority(n int) int { return n/2 + 1 }

// Member states.
const (
	MemberAlive = "alive"
	MemberDead  = "dead"
)

// Member is a node's record in the cluster.
type Member struct {
	ID              string `json:"id"`
	RaftAddr        string `json:"raft_addr"`
	RPCAddr         string `json:"rpc_addr,omitempty"`
	HTTPAddr        string `json:"http_addr,omitempty"`
	LastHeartbeatMs int64  `json:"last_heartbeat_ms"`
	State           string `json:"state"` // MemberAlive or MemberDead
	Draining        bool   `json:"draining,omitempty"`
	// DiskID names the data directory the node runs on (datadir.Disk):
	// a new one means its copies of replicated partitions are gone. Set
	// by the first record that carries one; changed only by ReplaceDisk
	// (an upsert keeps a recorded one). Empty: a member recorded before
	// disk ids (the upgrade gap: its first id is taken on its word).
	DiskID string `json:"disk_id,omitempty"`
}

// routingEqual reports whether two records route traffic the same way. Only
// heartbeat timestamps, the drain flag and the disk id may differ (they do not count
// towards LatestDomainVersion).
func (m Member) routingEqual(o Member) bool {
	return m.ID == o.ID && m.RaftAddr == o.RaftAddr && m.RPCAddr == o.RPCAddr &&
		m.HTTPAddr == o.HTTPAddr && m.State == o.State
}

// AttachSpec describes a fan-out link from the child's side: which parent,
// the attach epoch, the attach point per parent partition, the fixed
// delivery delay and the link's filter (fan-out's rules:
// internal/fanout/doc.go). A spec without Filter (every spec written
// before filters existed) is a link without one.
type AttachSpec struct {
	Parent        string          `json:"parent"`
	Epoch         string          `json:"epoch"`
	AttachOffsets []uint64        `json:"attach_offsets,omitempty"`
	DelayMs       int64           `json:"delay_ms,omitempty"`
	Filter        json.RawMessage `json:"filter,omitempty"`
	FilterScope   string          `json:"filter_scope,omitempty"`
	// Envelope: the link wraps its copies (Topic.FanoutEnvelope); a spec
	// without it (every spec written before envelopes existed) copies as
	// published.
	Envelope *LinkEnvelope `json:"envelope,omitempty"`
}
