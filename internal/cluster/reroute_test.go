package cluster

import (
	"context"
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
)

// placed creates topic with one partition per owner in owners.
func placed(t *testing.T, ms *meta.Store, topic string, owners ...string) {
	t.Helper()
	tp := meta.Topic{Name: topic, Partitions: len(owners), RetentionMs: 1, VisibilityTimeoutMs: 1, MaxInFlight: 1, MaxAckedAhead: 1}
	var as []meta.Assignment
	for p, o := range owners {
		as = append(as, meta.Assignment{Topic: topic, Partition: p, Owner: o})
	}
	if err := ms.CreateTopic(context.Background(), tp, as, nil); err != nil {
		t.Fatal(err)
	}
}

func withMembers(t *testing.T, ms *meta.Store, members ...meta.Member) {
	t.Helper()
	for _, m := range members {
		if err := ms.UpsertMember(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRerouteToALiveSibling: records wait for their own partition until
// its owner is dead or RerouteAfter passes failed; then they go to the
// next partition whose owner is another node and alive (or this one).
func TestRerouteToALiveSibling(t *testing.T) {
	ms := metatest.Leader(t, t.TempDir(), "a")
	withMembers(t, ms, meta.Member{ID: "a", State: meta.MemberAlive}, meta.Member{ID: "b", State: meta.MemberAlive},
		meta.Member{ID: "d", State: meta.MemberDead})
	placed(t, ms, "t", "a", "b", "d", "a")
	placed(t, ms, "same", "b", "b")
	r := Rerouter{Self: "a", Meta: ms}
	for _, tc := range []struct {
		topic  string
		p      int32
		failed int
		to     int32
		ok     bool
	}{
		{"t", 2, 0, 3, true},                 // owner dead: at once, to a (this node)
		{"t", 1, RerouteAfter - 1, 0, false}, // owner alive, not failed enough
		{"t", 1, RerouteAfter, 3, true},      // skips p2 (owner dead)
		{"t", 0, RerouteAfter, 1, true},      // another node, alive
		{"same", 0, RerouteAfter, 0, false},  // every sibling on the same owner
		{"gone", 0, RerouteAfter, 0, false},  // no such topic
	} {
		to, ok := r.Reroute(tc.topic, tc.p, tc.failed)
		if to != tc.to || ok != tc.ok {
			t.Errorf("Reroute(%s/%d after %d) = %d, %v; want %d, %v", tc.topic, tc.p, tc.failed, to, ok, tc.to, tc.ok)
		}
	}
}

// TestPlacementIsAssignOverTheReplica: the broker's placement is Assign
// over the live members of this replica, avoiding the parent's owners
// for a child created with it.
func TestPlacementIsAssignOverTheReplica(t *testing.T) {
	ms := metatest.Leader(t, t.TempDir(), "a")
	withMembers(t, ms, meta.Member{ID: "a", State: meta.MemberAlive}, meta.Member{ID: "b", State: meta.MemberAlive},
		meta.Member{ID: "c", State: meta.MemberAlive, Draining: true}, meta.Member{ID: "d", State: meta.MemberDead})
	placed(t, ms, "src", "a", "b")
	pl := Placement{Meta: ms}
	got := pl.Place("child", 0, 2, 1, "src")
	if want := Assign("child", 0, 2, 1, []string{"a", "b"}, ms.Assignments("src")); !slices.EqualFunc(got, want, meta.Assignment.Equal) {
		t.Fatalf("Place = %+v, want %+v", got, want)
	}
	for p, a := range got {
		if a.Owner == ms.Assignments("src")[p].Owner {
			t.Fatalf("child partition %d on its parent's owner %q", p, a.Owner)
		}
	}
	if got := pl.Place("plain", 0, 4, 1, ""); !slices.EqualFunc(got, Assign("plain", 0, 4, 1, []string{"a", "b"}, nil), meta.Assignment.Equal) {
		t.Fatalf("Place without a parent = %+v", got)
	}
}
