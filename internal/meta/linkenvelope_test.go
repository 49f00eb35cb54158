package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// A link's envelope is set by its attach (or the create that attaches),
// changed and removed by SetLink without touching the filter (and the
// filter without touching it), goes with the link, and survives a
// snapshot; a bad format or ARN, or one on a remote child, is refused and
// changes nothing.
func TestLinkEnvelopeFollowsTheLink(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	apply := applier(t, f)
	topicOf := func(name string) Topic { t.Helper(); return topicIn(t, f, name) }
	envOf := func(name string) string {
		t.Helper()
		c := topicOf(name)
		if c.FanoutEnvelope == nil {
			return "none"
		}
		return c.FanoutEnvelope.Format + " " + c.FanoutEnvelope.TopicARN
	}
	env := &LinkEnvelope{Format: EnvelopeSNS, TopicARN: "arn:aws:sns:us-east-1:000000000000:news"}
	pol := json.RawMessage(`{"kind":["a"]}`)
	must(t, apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("p", 1)}))
	must(t, apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("c", 1)}))
	must(t, apply(OpAttach, AttachCmd{Child: "c", AttachSpec: AttachSpec{Parent: "p", Epoch: "e1", Filter: pol, Envelope: env}}))
	if got := envOf("c"); got != "sns arn:aws:sns:us-east-1:000000000000:news" {
		t.Fatalf("after attach: %q", got)
	}

	before := dump(t, f)
	for name, c := range map[string]SetLinkFilterCmd{
		"format":          {Parent: "p", Child: "c", KeepFilter: true, SetEnvelope: true, Envelope: &LinkEnvelope{Format: "sqs", TopicARN: env.TopicARN}},
		"no arn":          {Parent: "p", Child: "c", KeepFilter: true, SetEnvelope: true, Envelope: &LinkEnvelope{Format: EnvelopeSNS}},
		"not an arn":      {Parent: "p", Child: "c", KeepFilter: true, SetEnvelope: true, Envelope: &LinkEnvelope{Format: EnvelopeSNS, TopicARN: "news"}},
		"space":           {Parent: "p", Child: "c", KeepFilter: true, SetEnvelope: true, Envelope: &LinkEnvelope{Format: EnvelopeSNS, TopicARN: "arn:a b"}},
		"too long":        {Parent: "p", Child: "c", KeepFilter: true, SetEnvelope: true, Envelope: &LinkEnvelope{Format: EnvelopeSNS, TopicARN: "arn:" + strings.Repeat("x", MaxTopicARN-3)}},
		"keep and filter": {Parent: "p", Child: "c", KeepFilter: true, Filter: pol},
		"bad filter":      {Parent: "p", Child: "c", Filter: json.RawMessage(`7`), SetEnvelope: true},
	} {
		if err := apply(OpSetLinkFilter, c); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	after := dump(t, f)
	after.Applied = before.Applied
	if a, b := mustJSON(t, before), mustJSON(t, after); a != b {
		t.Fatalf("a refused envelope change changed the state:\n%s\n%s", a, b)
	}
	if err := CheckEnvelope(LinkEnvelope{Format: EnvelopeSNS, TopicARN: "arn:" + strings.Repeat("x", MaxTopicARN-4)}); err != nil {
		t.Fatalf("an ARN of %d bytes: %v", MaxTopicARN, err)
	}

	// The envelope alone: the filter stays.
	must(t, apply(OpSetLinkFilter, SetLinkFilterCmd{Parent: "p", Child: "c", Epoch: "e1", KeepFilter: true, SetEnvelope: true,
		Envelope: &LinkEnvelope{Format: EnvelopeSNS, TopicARN: "arn:x"}}))
	if got, c := envOf("c"), topicOf("c"); got != "sns arn:x" || string(c.FanoutFilter) != string(pol) {
		t.Fatalf("after setting the envelope: %q, filter %s", got, c.FanoutFilter)
	}
	// The filter alone (a command as written before envelopes): the envelope stays.
	must(t, apply(OpSetLinkFilter, SetLinkFilterCmd{Parent: "p", Child: "c"}))
	if got, c := envOf("c"), topicOf("c"); got != "sns arn:x" || c.FanoutFilter != nil {
		t.Fatalf("after removing the filter: %q, filter %s", got, c.FanoutFilter)
	}

	// It survives a snapshot and a restore.
	snap, err := f.Snapshot()
	must(t, err)
	var sink memSink
	must(t, snap.Persist(&sink))
	snap.Release()
	g := newBareFSM(t)
	must(t, g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	for _, tp := range dump(t, g).Topics {
		if tp.Name == "c" && (tp.FanoutEnvelope == nil || *tp.FanoutEnvelope != (LinkEnvelope{Format: EnvelopeSNS, TopicARN: "arn:x"})) {
			t.Fatalf("restored envelope %+v", tp.FanoutEnvelope)
		}
	}

	// Removed by null; gone with the link.
	must(t, apply(OpSetLinkFilter, SetLinkFilterCmd{Parent: "p", Child: "c", KeepFilter: true, SetEnvelope: true}))
	if got := envOf("c"); got != "none" {
		t.Fatalf("after removing: %q", got)
	}
	must(t, apply(OpSetLinkFilter, SetLinkFilterCmd{Parent: "p", Child: "c", KeepFilter: true, SetEnvelope: true, Envelope: env}))
	must(t, apply(OpDetach, DetachCmd{Parent: "p", Child: "c", KeepSchema: true}))
	if got := envOf("c"); got != "none" {
		t.Fatalf("after detach: %q", got)
	}

	// Created attached with one; a create without an attach cannot carry
	// one; nor can a remote child.
	must(t, apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("d", 1), Attach: &AttachSpec{Parent: "p", Epoch: "e2", Envelope: env}}))
	if got := envOf("d"); got != "sns "+env.TopicARN {
		t.Fatalf("created attached: %q", got)
	}
	loose := plainTopic("e", 1)
	loose.FanoutEnvelope = env
	if err := apply(OpCreateTopic, CreateTopicCmd{Topic: loose}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("envelope without an attach: %v", err)
	}
	remote := Topic{Name: "r", Remote: &RemoteTarget{URL: "http://x", Topic: "t"}}
	if err := apply(OpCreateTopic, CreateTopicCmd{Topic: remote, Attach: &AttachSpec{Parent: "p", Epoch: "e3", Envelope: env}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("envelope on a remote child: %v", err)
	}
}

// Records and commands written before envelopes existed decode as links
// without one, and a record without one encodes as it did.
func TestLinkWithoutEnvelopeDecodesAsBefore(t *testing.T) {
	t.Parallel()
	var tp Topic
	must(t, json.Unmarshal([]byte(`{"name":"c","partitions":1,"retention_ms":0,"visibility_timeout_ms":0,"max_in_flight_per_partition":0,"max_acked_ahead_per_partition":0,"created_at":1,"parent":"p","attach_epoch":"e1","dedupe_window_ms":0}`), &tp))
	if tp.FanoutEnvelope != nil || tp.Parent != "p" {
		t.Fatalf("old record decoded to %+v", tp)
	}
	if b := mustJSON(t, tp); strings.Contains(b, "envelope") {
		t.Fatalf("a record without an envelope encodes one: %s", b)
	}
	var c SetLinkFilterCmd
	must(t, decodePayload(OpSetLinkFilter, json.RawMessage(`{"parent":"p","child":"c","epoch":"e1","filter":{"a":["b"]}}`), &c))
	if c.SetEnvelope || c.KeepFilter || c.Envelope != nil {
		t.Fatalf("old command decoded to %+v", c)
	}
	var a AttachCmd
	must(t, decodePayload(OpAttach, json.RawMessage(`{"child":"c","parent":"p","epoch":"e1"}`), &a))
	if a.Envelope != nil {
		t.Fatalf("old attach decoded to %+v", a)
	}
}
