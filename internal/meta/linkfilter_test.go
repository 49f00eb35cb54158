package meta

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// A link's filter is set by its attach (or the create that attaches),
// changed and removed by SetLinkFilter, and goes with the link; the
// metastore refuses a filter that is not a JSON object, an unknown scope,
// a scope without a filter, and a change for another attach epoch, each
// changing nothing.
func TestLinkFilterFollowsTheLink(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	apply := applier(t, f)
	child := func(name string) Topic { t.Helper(); return topicIn(t, f, name) }
	// The record holds the policy as JSON (a stored record escapes <, >
	// and &): compared by value.
	filterOf := func(name string) string {
		c := child(name)
		if len(c.FanoutFilter) == 0 {
			return " " + c.FanoutFilterScope
		}
		var v any
		must(t, json.Unmarshal(c.FanoutFilter, &v))
		return mustJSON(t, v) + " " + c.FanoutFilterScope
	}
	must(t, apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("p", 1)}))
	must(t, apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("c", 1)}))
	pol := json.RawMessage(`{"kind":["a"]}`)

	// The attach carries it; the default scope is stored as none.
	must(t, apply(OpAttach, AttachCmd{Child: "c", AttachSpec: AttachSpec{Parent: "p", Epoch: "e1", Filter: pol, FilterScope: FilterHeaders}}))
	if got := filterOf("c"); got != `{"kind":["a"]} ` {
		t.Fatalf("after attach: %q", got)
	}

	// Refusals change nothing.
	before := dump(t, f)
	for name, c := range map[string]struct {
		cmd  SetLinkFilterCmd
		want error
	}{
		"not an object":     {SetLinkFilterCmd{Parent: "p", Child: "c", Filter: json.RawMessage(`["a"]`)}, ErrInvalid},
		"unknown scope":     {SetLinkFilterCmd{Parent: "p", Child: "c", Filter: pol, FilterScope: "body"}, ErrInvalid},
		"scope, no filter":  {SetLinkFilterCmd{Parent: "p", Child: "c", FilterScope: FilterPayload}, ErrInvalid},
		"another epoch":     {SetLinkFilterCmd{Parent: "p", Child: "c", Epoch: "e0", Filter: pol}, ErrConflict},
		"not a child of it": {SetLinkFilterCmd{Parent: "c", Child: "p", Filter: pol}, ErrNotFound},
		"no such child":     {SetLinkFilterCmd{Parent: "p", Child: "x", Filter: pol}, ErrNotFound},
	} {
		if err := apply(OpSetLinkFilter, c.cmd); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	after := dump(t, f)
	after.Applied = before.Applied
	if a, b := mustJSON(t, before), mustJSON(t, after); a != b {
		t.Fatalf("a refused filter change changed the state:\n%s\n%s", a, b)
	}

	must(t, apply(OpSetLinkFilter, SetLinkFilterCmd{Parent: "p", Child: "c", Epoch: "e1", Filter: json.RawMessage(`{"n":[{"numeric":[">",1]}]}`), FilterScope: FilterPayload}))
	if got := filterOf("c"); got != `{"n":[{"numeric":["\u003e",1]}]} payload` {
		t.Fatalf("after set: %q", got)
	}
	must(t, apply(OpSetLinkFilter, SetLinkFilterCmd{Parent: "p", Child: "c"}))
	if got := filterOf("c"); got != " " {
		t.Fatalf("after remove: %q", got)
	}

	// Detach clears it; a re-attach without one has none.
	must(t, apply(OpSetLinkFilter, SetLinkFilterCmd{Parent: "p", Child: "c", Filter: pol}))
	must(t, apply(OpDetach, DetachCmd{Parent: "p", Child: "c", KeepSchema: true}))
	if got := filterOf("c"); got != " " {
		t.Fatalf("after detach: %q", got)
	}
	if err := apply(OpSetLinkFilter, SetLinkFilterCmd{Parent: "p", Child: "c", Filter: pol}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("filter on a detached child: %v", err)
	}

	// Created attached, with a filter; a create without an attach cannot
	// carry one.
	withFilter := CreateTopicCmd{Topic: plainTopic("d", 1), Attach: &AttachSpec{Parent: "p", Epoch: "e2", Filter: pol, FilterScope: FilterPayload}}
	must(t, apply(OpCreateTopic, withFilter))
	if got := filterOf("d"); got != `{"kind":["a"]} payload` {
		t.Fatalf("created attached: %q", got)
	}
	loose := plainTopic("e", 1)
	loose.FanoutFilter = pol
	if err := apply(OpCreateTopic, CreateTopicCmd{Topic: loose}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("filter without an attach: %v", err)
	}
	if err := apply(OpAttach, AttachCmd{Child: "c", AttachSpec: AttachSpec{Parent: "p", Epoch: "e3", Filter: json.RawMessage(`7`)}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("attach with a filter that is not an object: %v", err)
	}
}

// Commands written before filters existed replay to a link without one:
// an attach payload without the fields is what it always was.
func TestAttachWithoutFilterFieldsReplaysAsBefore(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	for i, raw := range []struct {
		op      Op
		payload string
	}{
		{OpCreateTopic, `{"topic":{"name":"p","partitions":1,"retention_ms":0,"visibility_timeout_ms":0,"max_in_flight_per_partition":0,"max_acked_ahead_per_partition":0,"created_at":1,"dedupe_window_ms":0}}`},
		{OpCreateTopic, `{"topic":{"name":"c","partitions":1,"retention_ms":0,"visibility_timeout_ms":0,"max_in_flight_per_partition":0,"max_acked_ahead_per_partition":0,"created_at":1,"dedupe_window_ms":0}}`},
		{OpAttach, `{"child":"c","parent":"p","epoch":"e1","attach_offsets":[0],"delay_ms":5}`},
	} {
		cmd := Command{Op: raw.op, Payload: json.RawMessage(raw.payload)}
		if err := applyRaw(t, f, uint64(i+1), cmd.Op, cmd.Payload); err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
	}
	for _, tp := range dump(t, f).Topics {
		if tp.Name == "c" && (tp.Parent != "p" || tp.FanoutDelayMs != 5 || tp.FanoutFilter != nil || tp.FanoutFilterScope != "") {
			t.Fatalf("old attach replayed to %+v", tp)
		}
	}
}

// The store proposes the change through Raft like every other write.
func TestStoreSetLinkFilter(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.CreateTopic(ctx, plainTopic("p", 1), nil, nil))
	must(t, s.CreateTopic(ctx, plainTopic("c", 1), nil, nil))
	must(t, s.Attach(ctx, "c", AttachSpec{Parent: "p", Epoch: "e1"}))
	must(t, s.SetLinkFilter(ctx, "p", "c", "e1", json.RawMessage(`{"k":["v"]}`), ""))
	if c, _ := s.Topic("c"); string(c.FanoutFilter) != `{"k":["v"]}` {
		t.Fatalf("filter %q", c.FanoutFilter)
	}
	if err := s.SetLinkFilter(context.Background(), "p", "c", "e9", nil, ""); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale epoch: %v", err)
	}
}

// applier applies commands to f at Raft indexes 1, 2, ...
func applier(t testing.TB, f *fsm) func(op Op, payload any) error {
	idx := uint64(0)
	return func(op Op, payload any) error {
		t.Helper()
		idx++
		return applyRaw(t, f, idx, op, payload)
	}
}

// topicIn is f's record of the topic name; the test fails without one.
func topicIn(t testing.TB, f *fsm, name string) Topic {
	t.Helper()
	for _, tp := range dump(t, f).Topics {
		if tp.Name == name {
			return tp
		}
	}
	t.Fatalf("no topic %q", name)
	return Topic{}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}
