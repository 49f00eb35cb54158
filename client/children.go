package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// The states of a remote child's link (docs/http-api.md, "Fan-out children").
const (
	LinkRunning       = "running"
	LinkRetrying      = "retrying"
	LinkAuthFailed    = "auth_failed"
	LinkTargetMissing = "target_missing"
	LinkRejected      = "rejected"
)

// Child is one entry of the children listing
// (GET /v1/topics/{parent}/children).
type Child struct {
	Name            string   `json:"name"`
	DelayMs         int64    `json:"delay_ms"`
	AttachEpoch     string   `json:"attach_epoch"`
	LagMessages     uint64   `json:"lag_messages"`
	DueLagSeconds   *float64 `json:"due_lag_seconds,omitempty"` // delay children only
	LagComplete     bool     `json:"lag_complete"`
	DroppedMessages uint64   `json:"dropped_messages"`

	// A filtered link has its filter (canonical: keys sorted) and scope
	// (FilterHeaders or FilterPayload); Filtered counts the records it
	// did not match, stepped over by the cursors of the node that
	// answered since that node started.
	Filter      json.RawMessage `json:"filter,omitempty"`
	FilterScope string          `json:"filter_scope,omitempty"`
	Filtered    uint64          `json:"filtered"`

	// Envelope, on an enveloped link: how it wraps each copy.
	Envelope *LinkEnvelope `json:"envelope,omitempty"`

	// A remote child (a topic of another cluster) has its target, without
	// credentials; the state of its link (LinkRunning, …) and why it is in
	// it; and, per parent partition, the recovery point: the target holds
	// everything committed before it. A local child has none of these.
	Remote        *RemoteTarget   `json:"remote,omitempty"`
	State         string          `json:"state,omitempty"`
	StateReason   string          `json:"state_reason,omitempty"`
	RecoveryPoint []RecoveryPoint `json:"recovery_point,omitempty"`

	raw json.RawMessage
}

// Raw is the entry exactly as the server sent it, fields this client does
// not know included; nil for a Child not decoded from an answer.
func (k Child) Raw() json.RawMessage { return k.raw }

// UnmarshalJSON decodes an entry and keeps its bytes for Raw.
func (k *Child) UnmarshalJSON(b []byte) error {
	type plain Child
	if err := json.Unmarshal(b, (*plain)(k)); err != nil {
		return err
	}
	k.raw = bytes.Clone(b)
	return nil
}

// RecoveryPoint is one parent partition's part of a remote child's
// recovery point; CommittedAtMs is 0 until the target acknowledged a
// record since the owning node started the link. State is that
// partition's link state; RejectedOffset the parent offset the link
// stopped at when the target refuses that record.
type RecoveryPoint struct {
	Partition      int     `json:"partition"`
	NextOffset     uint64  `json:"next_offset"`
	CommittedAtMs  int64   `json:"committed_at_ms"`
	State          string  `json:"state,omitempty"`
	RejectedOffset *uint64 `json:"rejected_offset,omitempty"`
}

// RemoteTarget is a topic of another Narad cluster. The credentials are
// sent at attach and never come back.
type RemoteTarget struct {
	URL      string `json:"url"`
	Topic    string `json:"topic"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// Children lists the topics attached to parent, with their lag.
func (c *Client) Children(ctx context.Context, parent string) ([]Child, error) {
	if parent == "" {
		return nil, errEmptyName
	}
	var out struct {
		Children []Child `json:"children"`
	}
	if _, err := c.doJSON(ctx, http.MethodGet, topicPath(parent, "children"), nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Children, nil
}

// The start positions of a remote child (AttachRequest.Start).
const (
	StartAttach   = "attach"   // the parent's end at attach (the default)
	StartFrontier = "frontier" // each partition's consumer frontier
	StartOldest   = "oldest"   // the oldest retained record
)

// The scopes of a link's filter (AttachRequest.FilterScope,
// ChildPatch.FilterScope).
const (
	FilterHeaders = "headers" // the record's headers (the default)
	FilterPayload = "payload" // the fields of its JSON payload
)

// EnvelopeSNS is the one format of a link's envelope: Amazon SNS's
// notification JSON, as SNS delivers to an SQS queue without
// RawMessageDelivery.
const EnvelopeSNS = "sns"

// LinkEnvelope is a link's envelope (docs/http-api.md, "Envelopes"): each
// copy's payload is its source record wrapped in Format, naming TopicARN
// (1..1024 bytes of printable ASCII starting "arn:"); the copy carries
// none of the source's client headers.
type LinkEnvelope struct {
	Format   string `json:"format"`
	TopicARN string `json:"topic_arn"`
}

// AttachRequest attaches Child to a parent; the child receives every parent
// record DelayMs after it was appended. With Remote set, Child is the
// link's name (no local topic is needed) and the records go to Remote's
// topic, from Start. With Filter set (an Amazon SNS filter policy, a
// JSON object), the link copies only the records it matches, in
// FilterScope (FilterHeaders when empty); a malformed one is a 400 whose
// message names the place in it. With Envelope set, a local link wraps
// each copy in it.
type AttachRequest struct {
	Child       string          `json:"child"`
	DelayMs     int64           `json:"delay_ms,omitempty"`
	Remote      *RemoteTarget   `json:"remote,omitempty"`
	Start       string          `json:"start,omitempty"`
	Filter      json.RawMessage `json:"filter,omitempty"`
	FilterScope string          `json:"filter_scope,omitempty"`
	Envelope    *LinkEnvelope   `json:"envelope,omitempty"`
}

// AttachResult is the attach answer: the parent's record (its Children
// include the new child) with the new link's Child, DelayMs and, in the
// embedded Topic's AttachEpoch and AttachOffsets, its epoch and start
// offsets. A remote link also has its target (without credentials) and
// state, and Warnings an operator should read (credentials sent to a
// plaintext http:// target, say).
type AttachResult struct {
	Topic
	Child       string          `json:"child"`
	DelayMs     int64           `json:"delay_ms"`
	Filter      json.RawMessage `json:"filter,omitempty"`
	FilterScope string          `json:"filter_scope,omitempty"`
	Envelope    *LinkEnvelope   `json:"envelope,omitempty"`
	Remote      *RemoteTarget   `json:"remote,omitempty"`
	State       string          `json:"state,omitempty"`
	Warnings    []string        `json:"warnings,omitempty"`
}

// UnmarshalJSON decodes the whole answer; without it the embedded Topic's
// method would decode the topic alone and drop Child.
func (r *AttachResult) UnmarshalJSON(b []byte) error {
	type plainTopic Topic
	var wire struct {
		plainTopic
		Child       string          `json:"child"`
		DelayMs     int64           `json:"delay_ms"`
		Filter      json.RawMessage `json:"filter"`
		FilterScope string          `json:"filter_scope"`
		Envelope    *LinkEnvelope   `json:"envelope"`
		Remote      *RemoteTarget   `json:"remote"`
		State       string          `json:"state"`
		Warnings    []string        `json:"warnings"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return err
	}
	*r = AttachResult{Topic: Topic(wire.plainTopic), Child: wire.Child, DelayMs: wire.DelayMs, Filter: wire.Filter,
		FilterScope: wire.FilterScope, Envelope: wire.Envelope, Remote: wire.Remote, State: wire.State, Warnings: wire.Warnings}
	r.raw = bytes.Clone(b)
	return nil
}

// Attach attaches a child: POST /v1/topics/{p}/children.
func (c *Client) Attach(ctx context.Context, parent string, req AttachRequest) (AttachResult, error) {
	if parent == "" || req.Child == "" {
		return AttachResult{}, errEmptyName
	}
	var out AttachResult
	_, err := c.doJSON(ctx, http.MethodPost, topicPath(parent, "children"), nil, req, &out)
	return out, err
}

// Detach detaches a child: DELETE /v1/topics/{p}/children/{c}.
func (c *Client) Detach(ctx context.Context, parent, child string) error {
	if parent == "" || child == "" {
		return errEmptyName
	}
	_, err := c.doJSON(ctx, http.MethodDelete, topicPath(parent, "children", url.PathEscape(child)), nil, nil, nil)
	return err
}

// ChildPatch changes a link: Filter is its new filter (a JSON object) in
// FilterScope (FilterHeaders when empty), or nil to remove the filter;
// with KeepFilter the filter is left as it is. With SetEnvelope, Envelope
// is the link's new envelope, nil to remove it; without, the envelope is
// left as it is. Both change in one step.
type ChildPatch struct {
	Filter      json.RawMessage
	FilterScope string
	KeepFilter  bool
	SetEnvelope bool
	Envelope    *LinkEnvelope
}

// MarshalJSON is the patch as sent: a nil Filter as null (remove) unless
// KeepFilter, an envelope only with SetEnvelope (nil as null).
func (p ChildPatch) MarshalJSON() ([]byte, error) {
	var wire struct {
		Filter      *json.RawMessage `json:"filter,omitempty"`
		FilterScope string           `json:"filter_scope,omitempty"`
		Envelope    *json.RawMessage `json:"envelope,omitempty"`
	}
	if !p.KeepFilter {
		f := p.Filter
		if f == nil {
			f = json.RawMessage("null")
		}
		wire.Filter, wire.FilterScope = &f, p.FilterScope
	}
	if p.SetEnvelope {
		e := json.RawMessage("null")
		if p.Envelope != nil {
			b, err := json.Marshal(p.Envelope)
			if err != nil {
				return nil, err
			}
			e = b
		}
		wire.Envelope = &e
	}
	return json.Marshal(wire)
}

// PatchChild changes the link parent → child:
// PATCH /v1/topics/{p}/children/{c}. Its cursors apply the change from
// their next batch. The answer is the link as Children lists it.
func (c *Client) PatchChild(ctx context.Context, parent, child string, p ChildPatch) (Child, error) {
	if parent == "" || child == "" {
		return Child{}, errEmptyName
	}
	var out Child
	_, err := c.doJSON(ctx, http.MethodPatch, topicPath(parent, "children", url.PathEscape(child)), nil, p, &out)
	return out, err
}
