package meta

import (
	"encoding/json"
	"testing"
)

// A detached child keeps the schema it inherited from its parent
// (docs/concepts.md, "Fan-out children"), by detach and by the parent's
// delete alike; a command written before the rule (no keep_schema) replays to
// what it made then.
func TestDetachedChildKeepsTheInheritedSchema(t *testing.T) {
	t.Parallel()
	parentSchema := json.RawMessage(`{"type":"object","required":["id"]}`)
	childSchema := json.RawMessage(`{"type":"object"}`)
	f := newBareFSM(t)
	idx := uint64(0)
	apply := func(op Op, payload any) {
		t.Helper()
		idx++
		must(t, applyRaw(t, f, idx, op, payload))
	}
	schemaOf := func(name string) string {
		t.Helper()
		for _, tp := range dump(t, f).Topics {
			if tp.Name == name {
				return string(tp.Schema)
			}
		}
		t.Fatalf("no topic %q", name)
		return ""
	}
	p := plainTopic("p", 1)
	p.Schema = parentSchema
	apply(OpCreateTopic, CreateTopicCmd{Topic: p})
	for _, c := range []string{"bare", "own", "old", "del"} {
		tp := plainTopic(c, 1)
		if c == "own" {
			tp.Schema = childSchema
		}
		apply(OpCreateTopic, CreateTopicCmd{Topic: tp})
		apply(OpAttach, AttachCmd{Child: c, AttachSpec: *spec("p", "e-"+c)})
	}
	bare := plainTopic("np", 1) // a parent without a schema takes nothing from a child
	apply(OpCreateTopic, CreateTopicCmd{Topic: bare})
	keeper := plainTopic("keeper", 1)
	keeper.Schema = childSchema
	apply(OpCreateTopic, CreateTopicCmd{Topic: keeper})
	apply(OpAttach, AttachCmd{Child: "keeper", AttachSpec: *spec("np", "e-k")})

	apply(OpDetach, DetachCmd{Parent: "p", Child: "bare", KeepSchema: true})
	apply(OpDetach, DetachCmd{Parent: "p", Child: "own", KeepSchema: true})
	apply(OpDetach, DetachCmd{Parent: "p", Child: "old"}) // as written before the rule
	apply(OpDetach, DetachCmd{Parent: "np", Child: "keeper", KeepSchema: true})
	for name, want := range map[string]json.RawMessage{"bare": parentSchema, "own": parentSchema, "old": nil, "keeper": childSchema} {
		if got := schemaOf(name); got != string(want) {
			t.Errorf("detached %s: schema %q, want %q", name, got, want)
		}
	}
	apply(OpDeleteTopic, DeleteTopicCmd{Name: "p", KeepSchema: true})
	if got := schemaOf("del"); got != string(parentSchema) {
		t.Errorf("child of a deleted parent: schema %q, want the parent's %q", got, parentSchema)
	}
}

// The Store's own detach and delete (what the API calls) write the rule into
// the command: a child leaves its parent, by detach or by the parent's
// delete, with the parent's schema.
func TestStoreDetachAndParentDeleteKeepTheInheritedSchema(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	parentSchema := json.RawMessage(`{"type":"object","required":["id"]}`)
	p := plainTopic("p", 1)
	p.Schema = parentSchema
	must(t, s.CreateTopic(ctx, p, nil, nil))
	for _, c := range []string{"by-detach", "by-delete"} {
		must(t, s.CreateTopic(ctx, plainTopic(c, 1), nil, spec("p", "e-"+c)))
	}
	must(t, s.Detach(ctx, "p", "by-detach", ""))
	must(t, s.DeleteTopic(ctx, "p"))
	for _, c := range []string{"by-detach", "by-delete"} {
		got, ok := s.Topic(c)
		if !ok {
			t.Fatalf("%s is gone", c)
		}
		if got.Parent != "" || string(got.Schema) != string(parentSchema) {
			t.Errorf("%s after leaving p: parent %q schema %q, want standalone with %q", c, got.Parent, got.Schema, parentSchema)
		}
	}
}
