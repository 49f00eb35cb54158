package fanout

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/narad-io/narad/internal/filter"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
)

// Filtered links (rule: filtered links): a child link may carry a filter
// policy (package filter, SNS's shape). Its cursor copies the records
// the filter matches and steps over the others exactly as over copied
// ones, counting them; commit before advance is unchanged, so the
// durable offset never passes a matching record the child has not
// committed. The cursor reads the link's filter from the child's record
// at every slab: a change applies from the next slab.

// PatchRequest is the body of PATCH /v1/topics/{parent}/children/{child}:
// the link's new filter, or null to remove it, and its new envelope, or
// null to remove it (rule: enveloped links). A field left out leaves that
// option as it is; at least one must be given.
type PatchRequest struct {
	Filter      json.RawMessage `json:"filter"`
	FilterScope string          `json:"filter_scope"`
	Envelope    json.RawMessage `json:"envelope"`
}

// CheckPatch checks a patch from its body alone (400 for a malformed
// one) and returns the command that makes it, Parent, Child and Epoch
// left for the caller.
func CheckPatch(req PatchRequest) (meta.SetLinkFilterCmd, error) {
	if len(req.Filter) == 0 && len(req.Envelope) == 0 {
		return meta.SetLinkFilterCmd{}, refusal.New(refusal.ErrInvalid, 0, "filter or envelope is required: a filter policy object or an envelope, or null to remove the link's")
	}
	var c meta.SetLinkFilterCmd
	if len(req.Filter) == 0 {
		if req.FilterScope != "" {
			return meta.SetLinkFilterCmd{}, refusal.New(refusal.ErrInvalid, 0, "filter_scope %q needs a filter", req.FilterScope)
		}
		c.KeepFilter = true
	} else {
		f, scope, err := CheckFilter(req.Filter, req.FilterScope)
		if err != nil {
			return meta.SetLinkFilterCmd{}, err
		}
		c.Filter, c.FilterScope = f, scope
	}
	if len(req.Envelope) > 0 {
		env, err := CheckEnvelope(req.Envelope)
		if err != nil {
			return meta.SetLinkFilterCmd{}, err
		}
		c.SetEnvelope, c.Envelope = true, env
	}
	return c, nil
}

// CheckFilter compiles a link's filter as an attach or a patch gives it
// and returns what to store: the policy's canonical form and its scope
// (meta.FilterHeaders when not given), or nothing for no filter (absent,
// null, or the empty policy {}, which matches every record). A policy
// filter refuses is 400 naming the place in it (filter.store[0]...),
// decided from the body alone, so the edge calls it before forwarding.
func CheckFilter(raw json.RawMessage, scope string) (json.RawMessage, string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		if scope != "" {
			return nil, "", refusal.New(refusal.ErrInvalid, 0, "filter_scope %q needs a filter", scope)
		}
		return nil, "", nil
	}
	if scope == "" {
		scope = meta.FilterHeaders
	}
	if scope != meta.FilterHeaders && scope != meta.FilterPayload {
		return nil, "", refusal.New(refusal.ErrInvalid, 0, "filter_scope %q: want %q or %q", scope, meta.FilterHeaders, meta.FilterPayload)
	}
	f, err := filter.Compile(raw, filter.Scope(scope))
	if err != nil {
		var fe *filter.Error
		if errors.As(err, &fe) {
			return nil, "", refusal.New(refusal.ErrInvalid, 0, "%s: %s", fe.Path, fe.Msg)
		}
		return nil, "", refusal.New(refusal.ErrInvalid, 0, "filter: %v", err)
	}
	if f.String() == "{}" {
		return nil, "", nil // matches everything: no filter
	}
	return json.RawMessage(f.String()), scope, nil
}

// shownFilter is a link's filter as views show it: canonical, with its
// scope named (a record stores the default scope as none).
func shownFilter(t meta.Topic) (json.RawMessage, string) {
	if len(t.FanoutFilter) == 0 {
		return nil, ""
	}
	scope := t.FanoutFilterScope
	if scope == "" {
		scope = meta.FilterHeaders
	}
	if f, err := filter.Compile(t.FanoutFilter, filter.Scope(scope)); err == nil {
		return json.RawMessage(f.String()), scope
	}
	return t.FanoutFilter, scope
}

// PatchChild sets or removes the filter, the envelope or both of the link
// parent → child. The change is one Raft command, made against the attach
// epoch it was read with; the link's cursors apply it from their next
// slab.
func (e *Engine) PatchChild(ctx context.Context, parentName, childName string, req PatchRequest) (ChildView, error) {
	for _, n := range []string{parentName, childName} {
		if err := topic.ValidateName(n); err != nil {
			return ChildView{}, err
		}
	}
	cmd, err := CheckPatch(req)
	if err != nil {
		return ChildView{}, err
	}
	parent, ok := e.meta.Topic(parentName)
	if !ok || parent.Remote != nil {
		return ChildView{}, refusal.New(refusal.ErrTopicNotFound, 0, "parent topic %q does not exist", parentName)
	}
	child, ok := e.meta.Topic(childName)
	if !ok || child.Parent != parentName {
		return ChildView{}, refusal.New(refusal.ErrNotFound, 0, "%q is not a child of %q", childName, parentName)
	}
	if cmd.Envelope != nil && child.Remote != nil {
		return ChildView{}, refusal.New(refusal.ErrInvalid, 0, "a remote child takes no envelope: its copies go to the target as published")
	}
	cmd.Parent, cmd.Child, cmd.Epoch = parentName, childName, child.AttachEpoch
	if err := e.topics.MetaErr(e.meta.SetLink(ctx, cmd)); err != nil {
		return ChildView{}, err
	}
	if child, ok = e.meta.Topic(childName); !ok || child.Parent != parentName {
		return ChildView{}, refusal.New(refusal.ErrNotFound, 0, "%q is not a child of %q", childName, parentName)
	}
	return e.childView(parent, child, e.remoteReports(parent)), nil
}

// slabFilter is a cursor's compiled filter: compiled again only when the
// child's record names another policy or scope. Only the cursor's
// goroutine uses it.
type slabFilter struct {
	raw, scope string
	f          *filter.Filter
	err        error
	headers    map[string]string // reused for every record's headers
}

// of returns the filter of the child's record t, nil for none. A policy
// this node cannot compile (only a record written by another version can
// hold one) is an error: the cursor stops and is restarted, and the link
// copies nothing unfiltered meanwhile.
func (s *slabFilter) of(t meta.Topic) (*filter.Filter, error) {
	if len(t.FanoutFilter) == 0 {
		return nil, nil
	}
	scope := t.FanoutFilterScope
	if scope == "" {
		scope = meta.FilterHeaders
	}
	if string(t.FanoutFilter) != s.raw || scope != s.scope {
		s.raw, s.scope = string(t.FanoutFilter), scope
		s.f, s.err = filter.Compile(t.FanoutFilter, filter.Scope(scope))
	}
	return s.f, s.err
}

// keep compacts recs, in place and in order, to the records f matches,
// and returns them with how many it stepped over. A record's headers are
// matched as a map of name to value: a record never holds a name twice
// (the header rules refuse it at produce), and the broker's own headers
// (narad-msg-id) are in it like any other.
func (s *slabFilter) keep(f *filter.Filter, recs []storage.Record) ([]storage.Record, int) {
	kept := recs[:0]
	for i := range recs {
		if f.Match(s.headersOf(f, &recs[i]), recs[i].Payload) {
			kept = append(kept, recs[i])
		}
	}
	clear(recs[len(kept):]) // no stale references to the records stepped over
	return kept, len(recs) - len(kept)
}

// headersOf is r's headers as the headers scope matches them, in a map
// reused for every record (Match keeps nothing); nil in the payload scope
// and for a record without headers.
func (s *slabFilter) headersOf(f *filter.Filter, r *storage.Record) map[string]string {
	if f.Scope() != filter.Headers || len(r.Headers) == 0 {
		return nil
	}
	if s.headers == nil {
		s.headers = map[string]string{}
	}
	clear(s.headers)
	for _, h := range r.Headers {
		s.headers[h.Name] = h.Value
	}
	return s.headers
}
