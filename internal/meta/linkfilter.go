package meta

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
)

// A fan-out link's filter (docs/concepts.md, "Fan-out children"): set by
// the attach that makes the link, changed by SetLinkFilter, cleared with
// the link. The metastore holds the policy; package fanout compiles it
// (package filter) before any command carries it, and its cursors match
// records against it.

// Filter scopes a link's filter may have; empty is FilterHeaders.
const (
	FilterHeaders = "headers"
	FilterPayload = "payload"
)

func applySetLinkFilter(a *applyTx, payload json.RawMessage) error {
	var c SetLinkFilterCmd
	if err := decodePayload(OpSetLinkFilter, payload, &c); err != nil {
		return err
	}
	_, child, err := a.attachedLink(c.Parent, c.Child, c.Epoch)
	if err != nil {
		return err
	}
	if err := checkFilterShape(c.Child, c.Filter, c.FilterScope); err != nil {
		return err
	}
	setFilter(&child, c.Filter, c.FilterScope)
	if err := a.putTopic(child); err != nil {
		return err
	}
	a.bump(domTopics)
	return nil
}

// checkFilterShape is the metastore's sanity check of a link's filter:
// absent, or a JSON object with a known scope (a scope needs a filter).
// What the policy says is package filter's to judge.
func checkFilterShape(child string, f json.RawMessage, scope string) error {
	switch {
	case len(f) == 0 && scope != "":
		return topicErr(child, ErrInvalid, "filter scope %q without a filter", scope)
	case len(f) == 0:
		return nil
	case scope != "" && scope != FilterHeaders && scope != FilterPayload:
		return topicErr(child, ErrInvalid, "filter scope %q: want %q or %q", scope, FilterHeaders, FilterPayload)
	case !json.Valid(f) || !bytes.HasPrefix(bytes.TrimLeft(f, " \t\r\n"), []byte("{")):
		return topicErr(child, ErrInvalid, "filter is not a JSON object")
	}
	return nil
}

// setFilter records a link's filter on its child: none when f is empty,
// and the default scope is stored as empty, so a link without a filter
// reads as it did before filters existed.
func setFilter(child *Topic, f json.RawMessage, scope string) {
	if len(f) == 0 {
		child.FanoutFilter, child.FanoutFilterScope = nil, ""
		return
	}
	if scope == FilterHeaders {
		scope = ""
	}
	child.FanoutFilter, child.FanoutFilterScope = slices.Clone(f), scope
}

// SetLinkFilter sets the filter of the link parent → child, or removes it
// (f empty). A non-empty epoch must be the child's current attach epoch.
func (s *Store) SetLinkFilter(ctx context.Context, parent, child, epoch string, f json.RawMessage, scope string) error {
	return s.propose(ctx, OpSetLinkFilter, SetLinkFilterCmd{Parent: parent, Child: child, Epoch: epoch, Filter: f, FilterScope: scope})
}
