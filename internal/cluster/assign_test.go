package cluster

import (
	"testing"

	"github.com/narad-io/narad/internal/meta"
)

func TestAssignRoundRobinOverLive(t *testing.T) {
	live := []string{"a", "b", "c"}
	as := Assign("orders", 0, 6, 1, live, nil)
	count := map[string]int{}
	for i, a := range as {
		if a.Partition != i || a.Topic != "orders" || a.Owner == "" {
			t.Fatalf("assignment %d: %+v", i, a)
		}
		count[a.Owner]++
	}
	if count["a"] != 2 || count["b"] != 2 || count["c"] != 2 {
		t.Fatalf("6 partitions over 3 nodes: %v", count)
	}
	// Growth continues the rotation.
	more := Assign("orders", 6, 9, 1, live, nil)
	if more[0].Partition != 6 || more[0].Owner != as[0].Owner {
		t.Fatalf("partition 6 should follow the rotation: %+v vs %+v", more[0], as[0])
	}
}

func TestAssignAntiAffinity(t *testing.T) {
	live := []string{"a", "b", "c"}
	parent := Assign("src", 0, 6, 1, live, nil)
	child := Assign("replica", 0, 6, 1, live, parent)
	for p := range child {
		if child[p].Owner == parent[p].Owner || child[p].Owner == "" {
			t.Fatalf("partition %d: child on %q, parent on %q", p, child[p].Owner, parent[p].Owner)
		}
	}
	// One live node: nothing to avoid with; the child still gets placed.
	solo := Assign("replica", 0, 2, 1, []string{"a"}, []meta.Assignment{{Owner: "a"}, {Owner: "a"}})
	if solo[0].Owner != "a" {
		t.Fatalf("single node: %+v", solo)
	}
	// Parent partition unplaced: the child's is deferred, never guessed.
	def := Assign("replica", 0, 2, 1, live, []meta.Assignment{{Owner: ""}, {Owner: "b"}})
	if def[0].Owner != "" || def[1].Owner == "b" || def[1].Owner == "" {
		t.Fatalf("deferral: %+v", def)
	}
}

func TestLiveSkipsDeadAndDraining(t *testing.T) {
	ms := []meta.Member{{ID: "c", State: meta.MemberAlive}, {ID: "a", State: meta.MemberAlive},
		{ID: "b", State: meta.MemberDead}, {ID: "d", State: meta.MemberAlive, Draining: true}}
	if got := Live(ms); len(got) != 2 || got[0] != "a" || got[1] != "c" {
		t.Fatalf("live %v", got)
	}
	if got := Assign("t", 0, 2, 1, nil, nil); got[0].Owner != "" {
		t.Fatalf("no live node: %+v", got)
	}
}
