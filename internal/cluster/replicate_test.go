package cluster

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/narad-io/narad/internal/meta"
)

// TestSingleCopyPlacementUnchanged: with rf 0 or 1, Assign places exactly
// what it did before replication existed (the digest was taken from the
// code of then, over a spread of clusters, topics and parents).
func TestSingleCopyPlacementUnchanged(t *testing.T) {
	for _, rf := range []int{0, 1} {
		var all [][]meta.Assignment
		for _, live := range [][]string{nil, {"a"}, {"a", "b"}, {"a", "b", "c"}, {"n1", "n2", "n3", "n4", "n5"}} {
			for _, name := range []string{"orders", "x", "replica"} {
				all = append(all, Assign(name, 0, 7, rf, live, nil))
				all = append(all, Assign(name, 2, 9, rf, live, Assign("src", 0, 5, rf, live, nil)))
				all = append(all, Assign(name, 0, 3, rf, live, []meta.Assignment{{Owner: ""}, {Owner: "b"}}))
			}
		}
		b, err := json.Marshal(all)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != "49c2b2972fb267b971e91b652ec5ba51c5eb97e947b12dc1d3de484b7331dca4" {
			t.Fatalf("rf %d: single-copy placements changed (digest %s)", rf, got)
		}
	}
}

func TestAssignReplicas(t *testing.T) {
	live := []string{"a", "b", "c", "d"}
	single := Assign("orders", 0, 8, 1, live, nil)
	as := Assign("orders", 0, 8, 3, live, nil)
	for p, a := range as {
		if a.Owner != single[p].Owner || a.Replicas[0] != a.Owner || len(a.Replicas) != 3 ||
			!slices.Equal(a.InSync, a.Replicas) || a.LeaderEpoch != 1 ||
			!slices.Equal(a.EpochStarts, []meta.EpochStart{{Epoch: 1, Offset: 0}}) {
			t.Fatalf("partition %d: %+v (single copy on %s)", p, a, single[p].Owner)
		}
		// Followers are the next nodes round robin.
		i := slices.Index(live, a.Owner)
		if want := []string{live[i], live[(i+1)%4], live[(i+2)%4]}; !slices.Equal(a.Replicas, want) {
			t.Fatalf("partition %d: replicas %v, want %v", p, a.Replicas, want)
		}
	}
	// A child keeps off its parent partition's copies where it can: with
	// 4 nodes and 2 copies each, entirely; with 3 nodes, one node shared.
	parent := Assign("src", 0, 6, 2, live, nil)
	for p, c := range Assign("child", 0, 6, 2, live, parent) {
		for _, id := range c.Replicas {
			if slices.Contains(parent[p].Replicas, id) {
				t.Fatalf("partition %d: child %v shares %s with parent %v", p, c.Replicas, id, parent[p].Replicas)
			}
		}
	}
	three := live[:3]
	parent = Assign("src", 0, 6, 2, three, nil)
	for p, c := range Assign("child", 0, 6, 2, three, parent) {
		shared := 0
		for _, id := range c.Replicas {
			if slices.Contains(parent[p].Replicas, id) {
				shared++
			}
		}
		if shared != 1 || slices.Contains(parent[p].Replicas, c.Owner) {
			t.Fatalf("partition %d: child %v (leader %s) vs parent %v: want one node shared, not the leader's",
				p, c.Replicas, c.Owner, parent[p].Replicas)
		}
	}
	// An unplaced parent partition defers the child's.
	if def := Assign("child", 0, 1, 3, live, []meta.Assignment{{}}); def[0].Owner != "" || len(def[0].Replicas) != 0 {
		t.Fatalf("deferral: %+v", def[0])
	}
}

// TestAssignReplicaProperties: for any cluster and factor, each placed
// partition has distinct replicas, never more than the live nodes nor
// the factor, the leader first among them, all in sync at epoch 1; and
// the shape passes the metastore's own check.
func TestAssignReplicaProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(rt, "live")
		var live []string
		for i := range n {
			live = append(live, fmt.Sprintf("n%d", i+1))
		}
		rf := rapid.IntRange(2, meta.MaxReplicationFactor).Draw(rt, "rf")
		from := rapid.IntRange(0, 5).Draw(rt, "from")
		to := from + rapid.IntRange(0, 12).Draw(rt, "count")
		var parent []meta.Assignment
		if n > 0 && rapid.Bool().Draw(rt, "child?") {
			parent = Assign("src", 0, rapid.IntRange(0, to).Draw(rt, "parent partitions"), rapid.IntRange(1, 3).Draw(rt, "parent rf"), live, nil)
		}
		as := Assign("t", from, to, rf, live, parent)
		if len(as) != to-from {
			rt.Fatalf("%d placements for [%d, %d)", len(as), from, to)
		}
		for i, a := range as {
			if a.Partition != from+i || a.Topic != "t" {
				rt.Fatalf("placement %d: %+v", i, a)
			}
			if n == 0 {
				if a.Owner != "" {
					rt.Fatalf("placed with no live node: %+v", a)
				}
				continue
			}
			if len(a.Replicas) != min(rf, n) || a.Replicas[0] != a.Owner || !slices.Equal(a.InSync, a.Replicas) || a.LeaderEpoch != 1 {
				rt.Fatalf("rf %d over %d nodes: %+v", rf, n, a)
			}
			for k, id := range a.Replicas {
				if !slices.Contains(live, id) || slices.Contains(a.Replicas[:k], id) {
					rt.Fatalf("replicas %v not distinct live nodes of %v", a.Replicas, live)
				}
			}
		}
		// The metastore accepts every placement made.
		for _, a := range as {
			if err := meta.CheckPlacement("t", a); err != nil {
				rt.Fatalf("placement %+v refused by the metastore: %v", a, err)
			}
		}
	})
}
