package fanout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/schema"
	"github.com/narad-io/narad/internal/topic"
)

// Link rules (docs/concepts.md, "Fan-out children").
const (
	MaxDelayMs         = 365 * 24 * 3600 * 1000
	retentionMarginMs  = 3_600_000
	attachStatsTimeout = 5 * time.Second
)

// AttachRequest is the body of POST /v1/topics/{parent}/children.
type AttachRequest struct {
	Child   string          `json:"child"`
	DelayMs int64           `json:"delay_ms"`
	Remote  json.RawMessage `json:"remote"`
	Start   string          `json:"start"`
	// Filter and FilterScope: the link copies only the records the filter
	// matches (rule: filtered links; CheckFilter).
	Filter      json.RawMessage `json:"filter"`
	FilterScope string          `json:"filter_scope"`
	// Envelope: the link wraps each copy (rule: enveloped links;
	// CheckEnvelope); absent or null for copies as published.
	Envelope json.RawMessage `json:"envelope"`
}

// AttachView is the answer to an attach (docs/http-api.md): the parent's
// record as the reference answers it ("role": "parent", "children" with
// the new child), plus the new link at the top level. A remote child's
// link also names its target (never its credentials) and its state, and
// carries the warnings an operator should read (a plaintext target with
// credentials). The link's fields are shallower than the embedded
// record's, so they are the ones encoded.
type AttachView struct {
	topic.View
	Child         string             `json:"child"`
	AttachEpoch   string             `json:"attach_epoch"`
	AttachOffsets []uint64           `json:"attach_offsets"`
	DelayMs       int64              `json:"delay_ms"`
	Filter        json.RawMessage    `json:"filter,omitempty"`
	FilterScope   string             `json:"filter_scope,omitempty"`
	Envelope      *meta.LinkEnvelope `json:"envelope,omitempty"`
	Remote        *meta.RemoteTarget `json:"remote,omitempty"`
	State         string             `json:"state,omitempty"`
	Warnings      []string           `json:"warnings,omitempty"`
}

// attachView is the answer to the attach of spec (committed as child).
func (e *Engine) attachView(parent, child string, spec meta.AttachSpec) (AttachView, error) {
	v, err := e.topics.View(parent)
	if err != nil {
		return AttachView{}, err
	}
	av := AttachView{View: v, Child: child, AttachEpoch: spec.Epoch, AttachOffsets: spec.AttachOffsets, DelayMs: spec.DelayMs}
	av.Filter, av.FilterScope = shownFilter(meta.Topic{FanoutFilter: spec.Filter, FanoutFilterScope: spec.FilterScope})
	av.Envelope = spec.Envelope
	return av, nil
}

// NewEpoch returns a fresh attach epoch: 8 random bytes, hex (rule: attach
// epochs).
func NewEpoch() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Attach links child under parent from now on (no backfill): it checks
// every rule, records the attach point of each parent partition, and
// commits the link with a fresh epoch in one Raft command.
func (e *Engine) Attach(ctx context.Context, parentName string, req AttachRequest) (AttachView, error) {
	remote := len(req.Remote) > 0 && string(req.Remote) != "null"
	// Rule: filtered links. Checked first: a malformed body is 400
	// whatever else is wrong, and nothing is stored.
	f, scope, err := CheckFilter(req.Filter, req.FilterScope)
	if err != nil {
		return AttachView{}, err
	}
	req.Filter, req.FilterScope = f, scope
	env, err := CheckEnvelope(req.Envelope) // rule: enveloped links
	if err != nil {
		return AttachView{}, err
	}
	if req.Start != "" && !remote {
		return AttachView{}, refusal.New(refusal.ErrInvalid, 0, "start applies to remote children only")
	}
	if remote {
		if env != nil {
			return AttachView{}, refusal.New(refusal.ErrInvalid, 0, "a remote child takes no envelope: its copies go to the target as published")
		}
		return e.attachRemote(ctx, parentName, req)
	}
	if err := topic.ValidateName(parentName); err != nil {
		return AttachView{}, err
	}
	if req.Child == "" {
		return AttachView{}, refusal.New(refusal.ErrInvalid, 0, "child is required")
	}
	if err := topic.ValidateName(req.Child); err != nil {
		return AttachView{}, err
	}
	if err := validDelay(req.DelayMs); err != nil {
		return AttachView{}, err
	}
	parent, ok := e.meta.Topic(parentName)
	if !ok {
		return AttachView{}, refusal.New(refusal.ErrTopicNotFound, 0, "parent topic %q does not exist", parentName)
	}
	child, ok := e.meta.Topic(req.Child)
	if !ok {
		return AttachView{}, refusal.New(refusal.ErrTopicNotFound, 0, "child topic %q does not exist", req.Child)
	}
	if err := checkLink(parent, child, req.DelayMs); err != nil {
		return AttachView{}, err
	}
	spec, err := e.attachSpec(ctx, parent, req.DelayMs, startAttach)
	if err != nil {
		return AttachView{}, err
	}
	spec.Filter, spec.FilterScope, spec.Envelope = req.Filter, req.FilterScope, env
	if err := e.topics.MetaErr(e.meta.Attach(ctx, req.Child, spec)); err != nil {
		return AttachView{}, err
	}
	return e.attachView(parentName, req.Child, spec)
}

// CreateChild creates a topic and attaches it to its parent in one Raft
// command, so a failed attach leaves no half-linked topic. Partitions
// default to the parent's.
func (e *Engine) CreateChild(ctx context.Context, req topic.CreateRequest, owner string) (topic.View, error) {
	if err := topic.ValidateName(req.Parent); err != nil {
		return topic.View{}, err
	}
	if err := NotOwnParent(req.Name, req.Parent); err != nil {
		return topic.View{}, err
	}
	delay := int64(0)
	if req.FanoutDelayMs != nil {
		delay = *req.FanoutDelayMs
	}
	if err := validDelay(delay); err != nil {
		return topic.View{}, err
	}
	f, scope, err := CheckFilter(req.FanoutFilter, req.FanoutFilterScope) // rule: filtered links
	if err != nil {
		return topic.View{}, err
	}
	env, err := CheckEnvelope(req.FanoutEnvelope) // rule: enveloped links
	if err != nil {
		return topic.View{}, err
	}
	// Validate the request itself before looking at the parent: a
	// malformed request is 400 whatever else is wrong.
	t, err := e.topics.PrepareTopic(req, owner)
	if err != nil {
		return topic.View{}, err
	}
	parent, ok := e.meta.Topic(req.Parent)
	if !ok {
		return topic.View{}, refusal.New(refusal.ErrTopicNotFound, 0, "parent topic %q does not exist", req.Parent)
	}
	if req.Partitions == 0 {
		t.Partitions = parent.Partitions // a child defaults to its parent's count
	}
	if err := checkLink(parent, t, delay); err != nil {
		return topic.View{}, err
	}
	spec, err := e.attachSpec(ctx, parent, delay, startAttach)
	if err != nil {
		return topic.View{}, err
	}
	spec.Filter, spec.FilterScope, spec.Envelope = f, scope, env
	return e.topics.CommitTopic(ctx, t, &spec)
}

// NotOwnParent refuses a create whose parent is the topic itself: a
// malformed request (400), decided from the body alone, before the parent
// is looked up (so it is never a 404) or the name found taken (409).
func NotOwnParent(name, parent string) error {
	if name == parent {
		return refusal.New(refusal.ErrInvalid, 0, "parent: a topic cannot be its own parent (%q)", name)
	}
	return nil
}

func validDelay(d int64) error {
	if d < 0 || d > MaxDelayMs {
		return refusal.New(refusal.ErrInvalid, 0, "delay must be 0 (no delay) or 1 ms .. 1 year (%d ms), got %d", MaxDelayMs, d)
	}
	return nil
}

// checkLink applies the link rules with messages a user can act on; the
// metastore checks them again atomically inside the attach command.
func checkLink(parent, child meta.Topic, delayMs int64) error {
	switch {
	case parent.Name == child.Name: // an invalid combination, not a conflict: 400 as the reference answers
		return refusal.New(refusal.ErrInvalid, 0, "a topic cannot be its own child: %q attached to itself", child.Name)
	case parent.Parent != "":
		return refusal.New(refusal.ErrConflict, 0, "%q is itself a child (of %q): no chains", parent.Name, parent.Parent)
	case child.Parent != "":
		return refusal.New(refusal.ErrConflict, 0, "%q is already attached to %q", child.Name, child.Parent)
	case len(child.Children) > 0:
		return refusal.New(refusal.ErrConflict, 0, "%q has children of its own: no chains", child.Name)
	case len(parent.Children) >= meta.MaxChildren:
		return refusal.New(refusal.ErrConflict, 0, "%q already has %d children, the most allowed", parent.Name, meta.MaxChildren)
	case delayMs > 0 && parent.RetentionMs != 0 && parent.RetentionMs < delayMs+retentionMarginMs:
		// The parent cannot buffer the delay: an invalid combination (400).
		return refusal.New(refusal.ErrInvalid, 0, "parent retention_ms %d is below delay + 1 h (%d): a delay child would lose records",
			parent.RetentionMs, delayMs+retentionMarginMs)
	}
	// Schema inheritance: the child takes the parent's schema while attached;
	// a child with its own schema must be compatible with it, and cannot go
	// under a parent without one (its schema would stop applying).
	switch hasP, hasC := len(parent.Schema) > 0, len(child.Schema) > 0; {
	case hasC && !hasP:
		return refusal.New(refusal.ErrConflict, 0, "%q has a schema and %q has none: a child inherits its parent's schema, so it would lose its own; give %q a schema first, or clear %q's",
			child.Name, parent.Name, parent.Name, child.Name)
	case hasC:
		if err := schema.ChildCompatible(parent.Schema, child.Schema); err != nil {
			return refusal.New(refusal.ErrConflict, 0, "schema of %q is incompatible with its parent's: %v", child.Name, err)
		}
	}
	return nil
}

// Start points of a remote child (rule: remote start points); every other
// child starts at attach.
const (
	startAttach   = "attach"
	startFrontier = "frontier"
	startOldest   = "oldest"
)

// attachSpec records the attach point: each parent partition's committed
// high watermark, asked of its owner while the attach is being proposed
// (rule: attach points) — or, for a remote child started at "frontier" or
// "oldest", the partition's consumer frontier or oldest retained offset
// (rule: remote start points). Records committed after these reads sit at
// or past them and are delivered. If any owner cannot answer, the attach
// fails with 503 and leaves no link: a guessed offset would skip records or
// backfill.
func (e *Engine) attachSpec(ctx context.Context, parent meta.Topic, delayMs int64, start string) (meta.AttachSpec, error) {
	offs := make([]uint64, parent.Partitions)
	remote := map[string][]int{}
	for p := range offs {
		owner, ok := e.meta.Owner(parent.Name, p)
		switch {
		case !ok || owner == "":
			return meta.AttachSpec{}, refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q has no owner yet", p, parent.Name)
		case owner != e.self:
			remote[owner] = append(remote[owner], p)
			continue
		}
		if start != startAttach {
			r := e.stats.LocalReports(parent.Name, []int{p}, false)[0]
			if !r.Available {
				return meta.AttachSpec{}, refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q cannot be described", p, parent.Name)
			}
			offs[p] = startOf(r, start)
			continue
		}
		hwm, err := e.stats.CommittedHWM(parent.Name, p)
		if err != nil {
			return meta.AttachSpec{}, refusal.New(refusal.ErrUnavailable, time.Second, "high watermark of %q/%d: %v", parent.Name, p, err)
		}
		offs[p] = hwm
	}
	// Remote owners are asked in parallel; any that cannot answer exactly
	// fails the attach (rule: attach points).
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		fail error
	)
	sem := make(chan struct{}, 16)
	for owner, parts := range remote {
		wg.Add(1)
		sem <- struct{}{}
		go func(owner string, parts []int) {
			defer func() { <-sem; wg.Done() }()
			cctx, cancel := context.WithTimeout(ctx, attachStatsTimeout)
			defer cancel()
			ask := e.stats.RemoteStats
			if start == startAttach {
				ask = e.stats.RemoteTails // the high watermark, exactly: the owner opens the log if it must
			}
			reps, err := ask(cctx, owner, parent.Name, parts)
			mu.Lock()
			defer mu.Unlock()
			if err == nil && len(reps) != len(parts) {
				err = fmt.Errorf("answered %d of %d partitions", len(reps), len(parts))
			}
			for _, r := range reps {
				if err == nil && (!r.Available || (start == startAttach && !r.Stats.Exact)) {
					err = fmt.Errorf("partition %d cannot be measured exactly", r.Partition)
				}
				if err == nil {
					offs[r.Partition] = startOf(r, start)
				}
			}
			if err != nil && fail == nil {
				fail = refusal.New(refusal.ErrUnavailable, time.Second, "cannot ask %s, owner of partitions %v of %q, for its high watermark: %v", owner, parts, parent.Name, err)
			}
		}(owner, parts)
	}
	wg.Wait()
	if fail != nil {
		return meta.AttachSpec{}, fail
	}
	return meta.AttachSpec{Parent: parent.Name, Epoch: NewEpoch(), AttachOffsets: offs, DelayMs: delayMs}, nil
}

// Detach ends the link; the child keeps its data and the schema it
// inherited, as a standalone topic. Its cursors stop on the next reconcile tick; their files go with the orphan
// sweep, leader-confirmed.
func (e *Engine) Detach(ctx context.Context, parentName, childName string) error {
	for _, n := range []string{parentName, childName} {
		if err := topic.ValidateName(n); err != nil {
			return err
		}
	}
	if _, ok := e.meta.Topic(parentName); !ok {
		return refusal.New(refusal.ErrTopicNotFound, 0, "parent topic %q does not exist", parentName)
	}
	child, ok := e.meta.Topic(childName)
	if !ok || child.Parent != parentName {
		return refusal.New(refusal.ErrNotFound, 0, "%q is not a child of %q", childName, parentName)
	}
	return e.topics.MetaErr(e.meta.Detach(ctx, parentName, childName, ""))
}

// startOf is a partition's start point under a start mode.
func startOf(r topic.PartitionReport, start string) uint64 {
	switch start {
	case startFrontier:
		return r.Frontier
	case startOldest:
		return r.Stats.OldestOffset
	}
	return r.Stats.HighWatermark
}
