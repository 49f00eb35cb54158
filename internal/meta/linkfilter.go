package meta

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
	if c.KeepFilter && (len(c.Filter) > 0 || c.FilterScope != "") {
		return topicErr(c.Child, ErrInvalid, "keep_filter with a filter")
	}
	if !c.KeepFilter {
		if err := checkFilterShape(c.Child, c.Filter, c.FilterScope); err != nil {
			return err
		}
	}
	if c.SetEnvelope {
		if err := checkEnvelope(child, c.Envelope); err != nil {
			return err
		}
	}
	if !c.KeepFilter {
		setFilter(&child, c.Filter, c.FilterScope)
	}
	if c.SetEnvelope {
		child.FanoutEnvelope = cloneEnvelope(c.Envelope)
	}
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

// SetLink changes a link's filter, its envelope or both in one command
// (SetLinkFilterCmd says which).
func (s *Store) SetLink(ctx context.Context, c SetLinkFilterCmd) error {
	return s.propose(ctx, OpSetLinkFilter, c)
}

// A fan-out link's envelope (docs/http-api.md, "Envelopes"): set by the
// attach that makes the link or by SetLink, cleared with the link. With
// one, each copy's payload is its source record wrapped as the format
// says — "sns": Amazon SNS's notification JSON, as SNS delivers to an
// SQS queue without RawMessageDelivery — built by package fanout. The
// metastore checks the envelope's shape; TopicARN is not interpreted.

// EnvelopeSNS is the one envelope format: Amazon SNS's notification.
const EnvelopeSNS = "sns"

// MaxTopicARN bounds LinkEnvelope.TopicARN, in bytes.
const MaxTopicARN = 1024

// LinkEnvelope is a link's envelope: its format and, for "sns", the
// TopicArn every notification names.
type LinkEnvelope struct {
	Format   string `json:"format"`
	TopicARN string `json:"topic_arn"`
}

// CheckEnvelope says what is wrong with e's shape, or nil: the format
// must be EnvelopeSNS, the TopicARN 1..MaxTopicARN printable ASCII bytes
// starting "arn:".
func CheckEnvelope(e LinkEnvelope) error {
	if e.Format != EnvelopeSNS {
		return fmt.Errorf("envelope format %q: want %q", e.Format, EnvelopeSNS)
	}
	if len(e.TopicARN) == 0 || len(e.TopicARN) > MaxTopicARN {
		return fmt.Errorf("envelope topic_arn of %d bytes: want 1..%d", len(e.TopicARN), MaxTopicARN)
	}
	for i := 0; i < len(e.TopicARN); i++ {
		if c := e.TopicARN[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("envelope topic_arn: byte %d (0x%02x) is not printable ASCII", i, c)
		}
	}
	if !strings.HasPrefix(e.TopicARN, "arn:") {
		return fmt.Errorf("envelope topic_arn %q does not start with \"arn:\"", e.TopicARN)
	}
	return nil
}

// checkEnvelope is the metastore's check of a link's envelope (nil: none)
// on child: its shape, and no envelope on a remote child, whose copies go
// through another cluster's produce as published.
func checkEnvelope(child Topic, e *LinkEnvelope) error {
	switch {
	case e == nil:
		return nil
	case child.Remote != nil:
		return topicErr(child.Name, ErrInvalid, "a remote child's link takes no envelope")
	}
	if err := CheckEnvelope(*e); err != nil {
		return topicErr(child.Name, ErrInvalid, "%v", err)
	}
	return nil
}

func cloneEnvelope(e *LinkEnvelope) *LinkEnvelope {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}
