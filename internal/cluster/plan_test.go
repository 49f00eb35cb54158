package cluster

import (
	"testing"

	"github.com/narad-io/narad/internal/meta"
)

func members(ids ...string) []meta.Member {
	var out []meta.Member
	for _, id := range ids {
		out = append(out, meta.Member{ID: id, State: meta.MemberAlive})
	}
	return out
}

func spread(topic string, owners ...string) []meta.Assignment {
	var out []meta.Assignment
	for p, o := range owners {
		out = append(out, meta.Assignment{Topic: topic, Partition: p, Owner: o})
	}
	return out
}

// apply plays moves as if they completed, to check the end state.
func apply(as map[string][]meta.Assignment, moves []Move) {
	for _, m := range moves {
		as[m.Topic][m.Partition].Owner = m.To
	}
}

func counts(as map[string][]meta.Assignment) map[string]int {
	c := map[string]int{}
	for _, list := range as {
		for _, a := range list {
			c[a.Owner]++
		}
	}
	return c
}

func TestPlanBalancesANewNodeWithFewestMoves(t *testing.T) {
	as := map[string][]meta.Assignment{
		"a": spread("a", "n1", "n2", "n3", "n1", "n2", "n3"),
		"b": spread("b", "n2", "n3", "n1", "n2", "n3", "n1"),
	}
	moves := Plan(members("n1", "n2", "n3", "n4"), nil, as)
	if len(moves) != 3 { // 12 over 4: n4 needs 3, each of n1..n3 gives 1
		t.Fatalf("moves %v, want 3", moves)
	}
	for _, m := range moves {
		if m.To != "n4" {
			t.Fatalf("move %v not to the new node", m)
		}
	}
	apply(as, moves)
	for id, n := range counts(as) {
		if n != 3 {
			t.Fatalf("after the moves %s owns %d: %v", id, n, counts(as))
		}
	}
	if again := Plan(members("n1", "n2", "n3", "n4"), nil, as); len(again) != 0 {
		t.Fatalf("a balanced cluster plans moves: %v", again)
	}
}

func TestPlanDrainsADecommissionedNode(t *testing.T) {
	ms := members("n1", "n2", "n3", "n4")
	ms[3].Draining = true
	as := map[string][]meta.Assignment{"a": spread("a", "n1", "n2", "n3", "n4", "n4", "n4")}
	moves := Plan(ms, nil, as)
	if len(moves) != 3 {
		t.Fatalf("moves %v, want the 3 partitions of n4", moves)
	}
	apply(as, moves)
	if c := counts(as); c["n4"] != 0 || c["n1"] != 2 || c["n2"] != 2 || c["n3"] != 2 {
		t.Fatalf("after draining: %v", c)
	}
}

func TestPlanLeavesDeadOwnersAndRespectsInFlight(t *testing.T) {
	ms := members("n1", "n2", "n3")
	ms[2].State = meta.MemberDead
	as := map[string][]meta.Assignment{"a": spread("a", "n1", "n1", "n1", "n1", "n3", "n3")}
	moves := Plan(ms, nil, as)
	for _, m := range moves {
		if m.From == "n3" || m.To == "n3" {
			t.Fatalf("a dead node's partition moved, or one moved to it: %v", m)
		}
	}
	if len(moves) != 2 {
		t.Fatalf("moves %v, want 2 (n1 4 -> 2, n2 0 -> 2)", moves)
	}
	// In flight moves count at their destination and cap new ones.
	var big []meta.Assignment
	for p := range 40 {
		a := meta.Assignment{Topic: "big", Partition: p, Owner: "n1"}
		if p < MaxMovesInFlight {
			a.Target = "n2"
		}
		big = append(big, a)
	}
	if moves := Plan(members("n1", "n2"), nil, map[string][]meta.Assignment{"big": big}); len(moves) != 0 {
		t.Fatalf("%d moves planned with %d in flight", len(moves), MaxMovesInFlight)
	}
	big[0].Target = ""
	if moves := Plan(members("n1", "n2"), nil, map[string][]meta.Assignment{"big": big}); len(moves) != 1 {
		t.Fatalf("one slot free: %v", moves)
	}
}

// Anti-affinity is a preference: a child partition avoids the node of the
// parent's same partition when another destination is as good.
func TestPlanPrefersAntiAffinity(t *testing.T) {
	topics := map[string]meta.Topic{"p": {Name: "p", Children: []string{"c"}}, "c": {Name: "c", Parent: "p"}}
	as := map[string][]meta.Assignment{
		"p": spread("p", "n3", "n4"),
		"c": spread("c", "n1", "n1"),
	}
	moves := Plan(members("n1", "n2", "n3", "n4"), topics, as)
	for _, m := range moves {
		if want := as["p"][m.Partition].Owner; m.To == want {
			t.Fatalf("child partition %d moved next to its parent copy on %s: %v", m.Partition, want, moves)
		}
	}
	if len(moves) != 1 {
		t.Fatalf("moves %v", moves)
	}
}
