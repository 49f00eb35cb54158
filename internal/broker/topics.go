package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/topic"
)

// Field bounds of docs/http-api.md.
const (
	minRetentionMs  = 3_600_000
	minVisibilityMs = 1_000
	maxVisibilityMs = int64(MaxVisibility / time.Millisecond)
	maxFlowCap      = 1_000_000
	maxDelayMs      = 365 * 24 * 3600 * 1000
)

// CreateTopicRequest is the body of POST /v1/topics (a value type of
// topic, shared with the fan-out engine's create-as-child).
type CreateTopicRequest = topic.CreateRequest

// AlterTopicRequest is the body of PATCH /v1/topics/{topic}.
type AlterTopicRequest struct {
	RetentionMs         *int64          `json:"retention_ms"`
	VisibilityTimeoutMs *int64          `json:"visibility_timeout_ms"`
	MaxInFlight         *int            `json:"max_in_flight_per_partition"`
	MaxAckedAhead       *int            `json:"max_acked_ahead_per_partition"`
	Schema              json.RawMessage `json:"schema"`
	Partitions          *int            `json:"partitions"`
	MaxDeliveries       *int            `json:"max_deliveries"`
	// DeadLetterTopic: a topic name, or "" to clear (with max_deliveries 0).
	DeadLetterTopic *string `json:"dead_letter_topic"`
	DedupeWindowMs  *int64  `json:"dedupe_window_ms"`
	DeliveryDelay   *string `json:"delivery_delay"`
	DeliveryDelayMs *int64  `json:"delivery_delay_ms"`
	// Ordering: "none" or "group" (docs/concepts.md, "Message groups").
	Ordering *string `json:"ordering"`
	// ReplicationFactor: 1..5 copies of each partition, at most the live
	// nodes; the controller adds or removes replicas to match.
	ReplicationFactor *int `json:"replication_factor"`
	// Tags and AWSAttributes, when present (not null), replace the
	// topic's maps whole; {} clears one (topic.ValidateTags,
	// topic.ValidateAWSAttributes).
	Tags          map[string]string `json:"tags"`
	AWSAttributes map[string]string `json:"aws_attributes"`
}

// TopicView is a topic as the API shows it (topic.View).
type TopicView = topic.View

// view is t as the API shows it. An attached child shows the schema it
// inherits (the one its records are checked against, and the one it
// keeps when it is detached), not the one its record held before.
func (a *admin) view(t meta.Topic) TopicView {
	t.Schema = a.schemaSource(t).Schema
	return topic.ViewOf(t)
}

func validRetention(v int64) error {
	if v != 0 && v < minRetentionMs {
		return refusal.New(refusal.ErrInvalid, 0, "retention_ms must be 0 (keep forever) or at least %d, got %d", minRetentionMs, v)
	}
	return nil
}

func validVisibility(v int64) error {
	if v < minVisibilityMs || v > maxVisibilityMs {
		return refusal.New(refusal.ErrInvalid, 0, "visibility_timeout_ms must be %d..%d, got %d", minVisibilityMs, maxVisibilityMs, v)
	}
	return nil
}

// ValidOrdering checks ordering, "none" or "group": what any node can
// refuse before forwarding a request.
func ValidOrdering(v *string) error {
	if v == nil {
		return nil
	}
	_, err := storedOrdering(*v)
	return err
}

// storedOrdering is the Topic.Ordering an API value asks for: "" for
// "none", "group" as is; anything else is refused naming the field.
func storedOrdering(v string) (string, error) {
	switch v {
	case meta.OrderingNone:
		return "", nil
	case meta.OrderingGroup:
		return v, nil
	}
	return "", refusal.New(refusal.ErrInvalid, 0, "ordering must be %q or %q, got %q", meta.OrderingNone, meta.OrderingGroup, v)
}

func validCap(field string, v int) error {
	if v < 1 || v > maxFlowCap {
		return refusal.New(refusal.ErrInvalid, 0, "%s must be 1..%d, got %d", field, maxFlowCap, v)
	}
	return nil
}

// ValidReplicationFactor checks the shape of replication_factor, 1..5
// copies: what any node can refuse before forwarding a request.
func ValidReplicationFactor(v *int) error {
	if v != nil && (*v < 1 || *v > meta.MaxReplicationFactor) {
		return refusal.New(refusal.ErrInvalid, 0, "replication_factor must be 1..%d, got %d", meta.MaxReplicationFactor, *v)
	}
	return nil
}

// validReplicationFactor checks replication_factor: 1..5 copies, on
// distinct nodes, so no more than the nodes that may receive them now.
func (a *admin) validReplicationFactor(v int) error {
	live := 1
	if a.cfg.LiveNodes != nil {
		live = a.cfg.LiveNodes()
	}
	switch {
	case ValidReplicationFactor(&v) != nil:
		return ValidReplicationFactor(&v)
	case v > live:
		return refusal.New(refusal.ErrInvalid, 0, "replication_factor %d is more than the %d live nodes: each copy needs a node of its own", v, live)
	}
	return nil
}

func (a *admin) validPartitions(v int) error {
	if v < 1 || v > a.cfg.MaxPartitions {
		return refusal.New(refusal.ErrInvalid, 0, "partitions must be 1..%d, got %d", a.cfg.MaxPartitions, v)
	}
	return nil
}

// CreateTopic validates every field, applies defaults and commits the
// topic with its partition assignments in one metastore command. A topic
// created with a parent goes through the fan-out engine (CreateChild),
// which adds the attach to the same command.
func (a *admin) CreateTopic(ctx context.Context, req CreateTopicRequest, owner string) (TopicView, error) {
	if req.Parent != "" {
		return TopicView{}, refusal.New(refusal.ErrInvalid, 0, "parent: creating a child needs the fan-out engine")
	}
	t, err := a.PrepareTopic(req, owner)
	if err != nil {
		return TopicView{}, err
	}
	return a.CommitTopic(ctx, t, nil)
}

// PrepareTopic validates a create request and returns the record to
// commit, defaults applied. Link fields are left to the attach.
func (a *admin) PrepareTopic(req CreateTopicRequest, owner string) (meta.Topic, error) {
	if err := ValidateTopicName(req.Name); err != nil {
		return meta.Topic{}, err
	}
	now := a.cfg.Now().Unix()
	t := meta.Topic{
		Name:                req.Name,
		Partitions:          a.cfg.DefaultPartitions,
		RetentionMs:         a.cfg.DefaultRetentionMs,
		VisibilityTimeoutMs: a.cfg.DefaultVisibilityMs,
		MaxInFlight:         a.cfg.DefaultMaxInFlight,
		MaxAckedAhead:       a.cfg.DefaultMaxAckedAhead,
		CreatedAt:           now,
		ModifiedAt:          now,
		Owner:               owner,
	}
	if err := ValidTopicMaps(req.Tags, req.AWSAttributes); err != nil {
		return meta.Topic{}, err
	}
	t.Tags, t.AWSAttributes = storedMap(req.Tags), storedMap(req.AWSAttributes)
	if req.Partitions != 0 {
		if err := a.validPartitions(req.Partitions); err != nil {
			return meta.Topic{}, err
		}
		t.Partitions = req.Partitions
	}
	if req.RetentionMs != nil {
		if err := validRetention(*req.RetentionMs); err != nil {
			return meta.Topic{}, err
		}
		t.RetentionMs = *req.RetentionMs
	}
	if req.VisibilityTimeoutMs != nil {
		if err := validVisibility(*req.VisibilityTimeoutMs); err != nil {
			return meta.Topic{}, err
		}
		t.VisibilityTimeoutMs = *req.VisibilityTimeoutMs
	}
	if req.MaxInFlight != nil {
		if err := validCap("max_in_flight_per_partition", *req.MaxInFlight); err != nil {
			return meta.Topic{}, err
		}
		t.MaxInFlight = *req.MaxInFlight
	}
	if req.MaxAckedAhead != nil {
		if err := validCap("max_acked_ahead_per_partition", *req.MaxAckedAhead); err != nil {
			return meta.Topic{}, err
		}
		t.MaxAckedAhead = *req.MaxAckedAhead
	}
	if req.DedupeWindowMs != nil {
		if err := validDedupeWindow(*req.DedupeWindowMs); err != nil {
			return meta.Topic{}, err
		}
		t.DedupeWindowMs = *req.DedupeWindowMs
	}
	if ms, ok, err := deliveryDelay(req.DeliveryDelay, req.DeliveryDelayMs); err != nil {
		return meta.Topic{}, err
	} else if ok {
		t.DeliveryDelayMs = ms
	}
	if req.Ordering != nil {
		o, err := storedOrdering(*req.Ordering)
		if err != nil {
			return meta.Topic{}, err
		}
		t.Ordering = o
	}
	if req.ReplicationFactor != nil {
		if err := a.validReplicationFactor(*req.ReplicationFactor); err != nil {
			return meta.Topic{}, err
		}
		t.ReplicationFactor = *req.ReplicationFactor
	}
	if hasSchema(req.Schema) {
		if _, err := a.schemas.compile(req.Schema); err != nil {
			return meta.Topic{}, err
		}
		t.Schema = req.Schema
	}
	if err := a.checkDeadLetter(req.Name, req.MaxDeliveries, req.DeadLetterTopic); err != nil {
		return meta.Topic{}, err
	}
	t.MaxDeliveries, t.DeadLetterTopic = req.MaxDeliveries, req.DeadLetterTopic
	if req.FanoutDelayMs != nil && req.Parent == "" {
		return meta.Topic{}, refusal.New(refusal.ErrInvalid, 0, "fanout_delay_ms needs parent")
	}
	if req.HasLinkFilter() && req.Parent == "" {
		return meta.Topic{}, refusal.New(refusal.ErrInvalid, 0, "fanout_filter, fanout_filter_scope and fanout_envelope need parent: they are the options of the link to it")
	}
	if _, ok := a.meta.Topic(req.Name); ok {
		return meta.Topic{}, refusal.New(refusal.ErrConflict, 0, "topic %q already exists", req.Name)
	}
	return t, nil
}

// CommitTopic commits a prepared topic, with its attach when it is created
// as a child, and returns it as the API shows it.
func (a *admin) CommitTopic(ctx context.Context, t meta.Topic, attach *meta.AttachSpec) (TopicView, error) {
	if !a.createOpen.Load() {
		return TopicView{}, refusal.New(refusal.ErrUnavailable, time.Second, "this node is still starting (startup reconcile); topic creation opens when it is done")
	}
	if a.diskFull() {
		return TopicView{}, refusal.New(refusal.ErrDiskFull, 5*time.Second, "this node's disk is full: topic create is refused so the room kept for deletes stays free; delete topics or grow the disk, then retry")
	}
	// Leftover data of a deleted topic of the same name must go first, or
	// the new topic would inherit its records.
	if err := a.clearOrphanDir(ctx, t.Name); err != nil {
		return TopicView{}, err
	}
	if err := metaErr(a.meta.CreateTopic(ctx, t, a.assign(t.Name, 0, t.Partitions, t.ReplicationFactor, parentOf(attach)), attach)); err != nil {
		return TopicView{}, err
	}
	return a.View(t.Name)
}

// View returns a topic as the API shows it, without partition stats.
func (a *admin) View(name string) (TopicView, error) {
	t, ok := a.meta.Topic(name)
	if !ok {
		return TopicView{}, refusal.New(refusal.ErrUnavailable, time.Second, "topic %q committed but not yet applied here", name)
	}
	return a.view(t), nil
}

// TopicRecord is topic's metadata record from the local replica (its
// owner, for authorization).
func (a *admin) TopicRecord(name string) (meta.Topic, bool) { return a.meta.Topic(name) }

// MetaErr maps metastore outcomes onto the HTTP vocabulary.
func (a *admin) MetaErr(err error) error { return metaErr(err) }

// CommittedHWM is a partition's committed high watermark, exact: from the
// open log, from a cleanly closed directory, or by opening the log when
// the directory cannot say (after a crash).
func (a *admin) CommittedHWM(topic string, p int) (uint64, error) {
	if l := a.parts.Peek(topic, p); l != nil {
		return l.HWM(), nil
	}
	if st, err := a.parts.Describe(topic, p); err == nil && st.Exact {
		return st.HighWatermark, nil
	}
	l, err := a.parts.Get(topic, p)
	if err != nil {
		return 0, err
	}
	return l.HWM(), nil
}

// assign places partitions [from, to) of a topic: the cluster's placement
// when set, else every partition on this node.
func (a *admin) assign(topic string, from, to, rf int, parent string) []meta.Assignment {
	if a.cfg.Placer != nil {
		return a.cfg.Placer(topic, from, to, rf, parent)
	}
	as := make([]meta.Assignment, 0, to-from)
	for p := from; p < to; p++ {
		as = append(as, meta.Assignment{Topic: topic, Partition: p, Owner: a.cfg.NodeID})
	}
	return as
}

// Topic listing page sizes (docs/http-api.md).
const (
	DefaultListLimit = 100
	// MaxListLimit is the largest page: a larger limit is capped to it,
	// not refused, as the reference does (the API says so in a header).
	MaxListLimit = 1000
)

// ListTopics pages topics by name; 0 is the default page size and a limit
// above MaxListLimit is capped to it.
func (a *admin) ListTopics(limit int, pageToken string) ([]TopicView, string, error) {
	if limit == 0 {
		limit = DefaultListLimit
	}
	if limit < 1 {
		return nil, "", refusal.New(refusal.ErrInvalid, 0, "limit must be 1..%d, got %d", MaxListLimit, limit)
	}
	limit = min(limit, MaxListLimit)
	if pageToken != "" {
		if err := ValidateTopicName(pageToken); err != nil {
			return nil, "", refusal.New(refusal.ErrInvalid, 0, "page_token is not one this server issued")
		}
	}
	page, next := a.meta.ListTopics(pageToken, limit)
	out := make([]TopicView, len(page))
	for i, t := range page {
		out[i] = a.view(t)
	}
	return out, next, nil
}

// AlterTopic changes settings live. Partitions only grow; new partitions
// are assigned at once.
func (a *admin) AlterTopic(ctx context.Context, name string, req AlterTopicRequest) (TopicView, error) {
	t, err := a.topic(name)
	if err != nil {
		return TopicView{}, err
	}
	u := meta.TopicUpdate{Name: name, IfVersion: t.Version}
	changed := false
	if req.RetentionMs != nil {
		if err := validRetention(*req.RetentionMs); err != nil {
			return TopicView{}, err
		}
		if err := a.checkDelayFloor(t, *req.RetentionMs); err != nil {
			return TopicView{}, err
		}
		u.RetentionMs, changed = req.RetentionMs, true
	}
	if req.VisibilityTimeoutMs != nil {
		if err := validVisibility(*req.VisibilityTimeoutMs); err != nil {
			return TopicView{}, err
		}
		u.VisibilityTimeoutMs, changed = req.VisibilityTimeoutMs, true
	}
	if req.MaxInFlight != nil {
		if err := validCap("max_in_flight_per_partition", *req.MaxInFlight); err != nil {
			return TopicView{}, err
		}
		u.MaxInFlight, changed = req.MaxInFlight, true
	}
	if req.MaxAckedAhead != nil {
		if err := validCap("max_acked_ahead_per_partition", *req.MaxAckedAhead); err != nil {
			return TopicView{}, err
		}
		u.MaxAckedAhead, changed = req.MaxAckedAhead, true
	}
	if req.MaxDeliveries != nil || req.DeadLetterTopic != nil {
		max, dlq := t.MaxDeliveries, t.DeadLetterTopic
		if req.MaxDeliveries != nil {
			max = *req.MaxDeliveries
		}
		if req.DeadLetterTopic != nil {
			dlq = *req.DeadLetterTopic
		}
		if err := a.checkDeadLetter(name, max, dlq); err != nil {
			return TopicView{}, err
		}
		u.MaxDeliveries, u.DeadLetterTopic, changed = req.MaxDeliveries, req.DeadLetterTopic, true
	}
	if req.DedupeWindowMs != nil {
		if err := validDedupeWindow(*req.DedupeWindowMs); err != nil {
			return TopicView{}, err
		}
		u.DedupeWindowMs, changed = req.DedupeWindowMs, true
	}
	if ms, ok, err := deliveryDelay(req.DeliveryDelay, req.DeliveryDelayMs); err != nil {
		return TopicView{}, err
	} else if ok {
		u.DeliveryDelayMs, changed = &ms, true
	}
	if req.Ordering != nil {
		o, err := storedOrdering(*req.Ordering)
		if err != nil {
			return TopicView{}, err
		}
		u.Ordering, changed = &o, true
	}
	if req.ReplicationFactor != nil {
		if err := a.validReplicationFactor(*req.ReplicationFactor); err != nil {
			return TopicView{}, err
		}
		u.ReplicationFactor, changed = req.ReplicationFactor, true
	}
	if err := ValidTopicMaps(req.Tags, req.AWSAttributes); err != nil {
		return TopicView{}, err
	}
	if req.Tags != nil {
		u.Tags, changed = &req.Tags, true
	}
	if req.AWSAttributes != nil {
		u.AWSAttributes, changed = &req.AWSAttributes, true
	}
	if req.Schema != nil {
		if err := a.alterSchema(t, req.Schema, &u); err != nil {
			return TopicView{}, err
		}
		changed = true
	}
	if req.Partitions != nil {
		n := *req.Partitions
		if err := a.validPartitions(n); err != nil {
			return TopicView{}, err
		}
		if n < t.Partitions {
			return TopicView{}, refusal.New(refusal.ErrInvalid, 0, "partitions may only grow: %q has %d, asked for %d", name, t.Partitions, n)
		}
		if n == t.Partitions && !changed {
			// The count it already has changes nothing (the reference's 400).
			return TopicView{}, refusal.New(refusal.ErrInvalid, 0, "nothing to change: %q already has %d partitions (partitions may only grow)", name, n)
		}
		if n > t.Partitions {
			u.Partitions, u.Assignments = req.Partitions, a.assign(name, t.Partitions, n, replicationFactor(t, u), t.Parent)
			changed = true
		}
	}
	if !changed {
		return TopicView{}, refusal.New(refusal.ErrInvalid, 0, "nothing to change: give at least one of retention_ms, visibility_timeout_ms, max_in_flight_per_partition, max_acked_ahead_per_partition, max_deliveries, dead_letter_topic, dedupe_window_ms, delivery_delay, ordering, replication_factor, tags, aws_attributes, schema, partitions")
	}
	u.ModifiedAt = a.cfg.Now().Unix() // the proposer's clock, as for created_at: the FSM reads none
	if err := metaErr(a.meta.UpdateTopic(ctx, u)); err != nil {
		return TopicView{}, err
	}
	t, err = a.topic(name)
	if err != nil {
		return TopicView{}, err
	}
	return a.view(t), nil
}

// ValidTopicMaps checks a request's tags and aws_attributes (either may
// be nil): what any node can refuse before forwarding a request.
func ValidTopicMaps(tags, attrs map[string]string) error {
	if err := topic.ValidateTags(tags); err != nil {
		return err
	}
	return topic.ValidateAWSAttributes(attrs)
}

// storedMap is m as the record keeps it: nil when empty.
func storedMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// replicationFactor is the factor t has once u applies: new partitions
// are placed with it (the controller brings the old ones to it).
func replicationFactor(t meta.Topic, u meta.TopicUpdate) int {
	if u.ReplicationFactor != nil {
		return *u.ReplicationFactor
	}
	return t.ReplicationFactor
}

// checkDelayFloor: a parent must retain at least delay + 1 h for each delay
// child (0 keeps forever and satisfies every floor).
func (a *admin) checkDelayFloor(parent meta.Topic, retentionMs int64) error {
	if retentionMs == 0 {
		return nil
	}
	for _, c := range parent.Children {
		child, ok := a.meta.Topic(c)
		if !ok || child.FanoutDelayMs == 0 {
			continue
		}
		if floor := child.FanoutDelayMs + 3_600_000; retentionMs < floor {
			// An invalid combination, not a conflict: 400, as the reference answers.
			return refusal.New(refusal.ErrInvalid, 0, "retention_ms %d is below %d, the floor of delay child %q (delay + 1 h)", retentionMs, floor, c)
		}
	}
	return nil
}

// DeleteTopic deletes the metadata, then this node's data for it.
func (a *admin) DeleteTopic(ctx context.Context, name string) error {
	if _, err := a.topic(name); err != nil {
		return err
	}
	if err := metaErr(a.meta.DeleteTopic(ctx, name)); err != nil {
		return err
	}
	a.forget(name)
	a.m.ForgetTopic(name)
	// The data goes once the leader confirms the topic is gone; if that
	// cannot be had now, the reconcile loop retries (the data is kept).
	if err := a.clearOrphanDir(ctx, name); err != nil {
		a.cfg.Logger.Warn("topic data kept for a later sweep", "topic", name, "err", err)
	}
	return nil
}

// clearOrphanDir deletes topics/<name> if it exists and the leader confirms
// the topic does not. Any doubt keeps the data and answers 503.
func (a *admin) clearOrphanDir(ctx context.Context, name string) error {
	dir, err := a.parts.TopicDir(name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	exists, _, err := a.meta.ConfirmTopic(ctx, name, "")
	if err != nil {
		a.cfg.Logger.Warn("cannot confirm with the leader that old data of a topic may go", "topic", name, "err", err)
		return refusal.New(refusal.ErrUnavailable, time.Second, "cannot confirm with the leader that old data of %q may go; retry", name)
	}
	if exists {
		return nil // a live topic's directory: never touched
	}
	a.forget(name)
	if err := a.parts.RemoveTopicData(name); err != nil {
		return err
	}
	a.cfg.Logger.Info("deleted data of a topic that no longer exists", "topic", name)
	return nil
}

func hasSchema(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) > 0 && !bytes.Equal(s, []byte("null"))
}

func parentOf(a *meta.AttachSpec) string {
	if a == nil {
		return ""
	}
	return a.Parent
}

// forgetTopic drops a deleted topic's queues, dedupe windows, broadcast
// and backlog figures here (its logs close with its data).
func (b *Broker) forgetTopic(name string) {
	b.parts.DropTopic(name)
	b.tmu.Lock()
	delete(b.topics, name)
	b.tmu.Unlock()
	b.backlog.Forget(name)
}
