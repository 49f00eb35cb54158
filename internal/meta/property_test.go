package meta

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestLinkInvariantsProperty applies random topic commands to a bare FSM and
// checks after each one that the fan-out links stay consistent, and at the
// end that replaying the same log into a fresh FSM gives the same state
// (Apply is deterministic).
func TestLinkInvariantsProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		f := newBareFSM(t)
		defer func() { _ = f.close() }()
		names := []string{"a", "b", "c", "d", "e"}
		name := rapid.SampledFrom(names)
		type entry struct {
			op      Op
			payload any
		}
		var log []entry
		for i := range rapid.IntRange(1, 60).Draw(rt, "steps") {
			var e entry
			switch rapid.IntRange(0, 5).Draw(rt, "kind") {
			case 0:
				var att *AttachSpec
				if rapid.Bool().Draw(rt, "with-attach") {
					att = spec(name.Draw(rt, "parent"), fmt.Sprint("e", i))
				}
				e = entry{OpCreateTopic, CreateTopicCmd{Topic: plainTopic(name.Draw(rt, "name"), rapid.IntRange(1, 3).Draw(rt, "parts")), Attach: att}}
			case 1, 2:
				e = entry{OpAttach, AttachCmd{Child: name.Draw(rt, "child"), AttachSpec: *spec(name.Draw(rt, "parent"), fmt.Sprint("e", i))}}
			case 3:
				e = entry{OpDetach, DetachCmd{Parent: name.Draw(rt, "parent"), Child: name.Draw(rt, "child")}}
			case 4:
				e = entry{OpDeleteTopic, DeleteTopicCmd{Name: name.Draw(rt, "name")}}
			case 5:
				e = entry{OpUpdateTopic, TopicUpdate{Name: name.Draw(rt, "name"), Partitions: ptr(rapid.IntRange(1, 4).Draw(rt, "parts"))}}
			}
			log = append(log, e)
			if err := applyRaw(t, f, uint64(i+1), e.op, e.payload); err != nil && !isOutcome(err) {
				rt.Fatalf("step %d: %v", i, err)
			}
			checkLinks(rt, dump(t, f))
		}
		g := newBareFSM(t)
		defer func() { _ = g.close() }()
		for i, e := range log {
			_ = applyRaw(t, g, uint64(i+1), e.op, e.payload)
		}
		if !reflect.DeepEqual(dump(t, f), dump(t, g)) {
			rt.Fatal("replaying the same log gave a different state")
		}
	})
}

func checkLinks(rt *rapid.T, d fsmDump) {
	byName := map[string]Topic{}
	for _, tp := range d.Topics {
		byName[tp.Name] = tp
	}
	for _, tp := range d.Topics {
		if tp.Parent != "" {
			p, ok := byName[tp.Parent]
			switch {
			case !ok:
				rt.Fatalf("%s's parent %s does not exist", tp.Name, tp.Parent)
			case p.Parent != "":
				rt.Fatalf("chain: %s → %s → %s", p.Parent, p.Name, tp.Name)
			case !slices.Contains(p.Children, tp.Name):
				rt.Fatalf("%s missing from %s's children %v", tp.Name, p.Name, p.Children)
			case tp.AttachEpoch == "":
				rt.Fatalf("%s attached without an epoch", tp.Name)
			}
		}
		if len(tp.Children) > 0 && tp.Parent != "" {
			rt.Fatalf("%s is both a parent and a child", tp.Name)
		}
		if !slices.IsSorted(tp.Children) || len(slices.Compact(slices.Clone(tp.Children))) != len(tp.Children) {
			rt.Fatalf("%s's children not sorted and unique: %v", tp.Name, tp.Children)
		}
		if len(tp.Children) > MaxChildren {
			rt.Fatalf("%s has %d children", tp.Name, len(tp.Children))
		}
		for _, c := range tp.Children {
			if byName[c].Parent != tp.Name {
				rt.Fatalf("%s lists %s, whose parent is %q", tp.Name, c, byName[c].Parent)
			}
		}
		if as := d.Assign[tp.Name]; len(as) != tp.Partitions {
			rt.Fatalf("%s: %d assignments for %d partitions", tp.Name, len(as), tp.Partitions)
		}
		if tp.Version == 0 || tp.Version > d.Applied {
			rt.Fatalf("%s: version %d, applied %d", tp.Name, tp.Version, d.Applied)
		}
	}
	if len(d.Assign) != len(d.Topics) {
		rt.Fatalf("%d assignment lists for %d topics", len(d.Assign), len(d.Topics))
	}
	if d.V.Topics > d.Applied || d.V.Assignments > d.Applied {
		rt.Fatalf("versions %+v past applied %d", d.V, d.Applied)
	}
}
