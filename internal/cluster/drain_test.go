package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
)

// TestDecommissionMovesReplicatedCopies (fake clock, one controller tick
// a step): decommissioning b, which leads partition 0 and follows on
// partition 1, adds d to both out of sync; nothing else happens while d
// catches up (the factor reconcile does not drop it either); once the
// leaders have d in sync, b's leadership of partition 0 goes to the
// in-sync copy that stays and leads fewest (n1: c leads partition 1),
// then b leaves both replica sets; retire sees b's copies as held until
// then. d is silent until b drains, so no rebalance moves a copy to it
// before.
func TestDecommissionMovesReplicatedCopies(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Time{})
	ms := metatest.Leader(t, t.TempDir(), "n1")
	for _, id := range []string{"b", "c", "d"} {
		must(t, ms.UpsertMember(ctx, meta.Member{ID: id, State: meta.MemberAlive, LastHeartbeatMs: clock.Epoch.UnixMilli()}))
	}
	must(t, ms.CreateTopic(ctx, meta.Topic{Name: "r", Partitions: 2, ReplicationFactor: 3}, []meta.Assignment{
		replicated("r", 0, []string{"b", "c", "n1"}, "b", "c", "n1"),
		replicated("r", 1, []string{"c", "b", "n1"}, "c", "b", "n1"),
	}, nil))
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(), Clock: clk}
	run(t, n)
	idle(t, clk)
	heard := []string{"b", "c"} // d silent: no rebalance moves a copy to it yet
	tick := func() (meta.Assignment, meta.Assignment) {
		t.Helper()
		for _, id := range heard {
			must(t, n.HandleHeartbeat(ctx, meta.Member{ID: id}))
		}
		clk.Advance(time.Second)
		idle(t, clk)
		as := ms.Assignments("r")
		return as[0], as[1]
	}
	if a0, a1 := tick(); !slices.Equal(a0.Replicas, []string{"b", "c", "n1"}) || !slices.Equal(a1.Replicas, []string{"c", "b", "n1"}) {
		t.Fatalf("replicas changed with nothing draining: %+v %+v", a0, a1)
	}
	if !n.holds("b") || n.holds("d") {
		t.Fatal("holds: b holds copies, d none")
	}

	must(t, ms.SetDraining(ctx, "b", true))
	heard = append(heard, "d")
	a0, a1 := tick()
	if !slices.Equal(a0.Replicas, []string{"b", "c", "n1", "d"}) || !slices.Equal(a0.InSync, []string{"b", "c", "n1"}) || a0.Owner != "b" {
		t.Fatalf("partition 0: the replacement should join out of sync: %+v", a0)
	}
	if !slices.Equal(a1.Replicas, []string{"c", "b", "n1", "d"}) || !slices.Equal(a1.InSync, []string{"c", "b", "n1"}) {
		t.Fatalf("partition 1: the replacement should join out of sync: %+v", a1)
	}
	if !n.holds("d") {
		t.Fatal("a follower copy is not counted as held")
	}
	// d catches up: nothing moves meanwhile.
	for range 3 {
		if b0, b1 := tick(); !b0.Equal(a0) || !b1.Equal(a1) {
			t.Fatalf("changed while the replacement is out of sync:\n%+v\n%+v", b0, b1)
		}
	}
	must(t, ms.SetInSync(ctx, meta.SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "b", InSync: []string{"b", "c", "n1", "d"}}))
	must(t, ms.SetInSync(ctx, meta.SetInSyncCmd{Topic: "r", Partition: 1, Epoch: 1, Leader: "c", InSync: []string{"c", "b", "n1", "d"}}))
	a0, a1 = tick()
	if a0.Owner != "n1" || a0.LeaderEpoch != 2 || !slices.Equal(a0.Replicas, []string{"c", "n1", "d"}) ||
		!slices.Equal(a0.InSync, []string{"c", "n1", "d"}) {
		t.Fatalf("partition 0: leadership should have gone to n1 (c leads partition 1), then b left: %+v", a0)
	}
	if a1.Owner != "c" || a1.LeaderEpoch != 1 || !slices.Equal(a1.Replicas, []string{"c", "n1", "d"}) {
		t.Fatalf("partition 1: b should have left: %+v", a1)
	}
	if n.holds("b") {
		t.Fatal("b still counted as holding a copy")
	}
	// Settled: the factor is met, nothing more changes.
	if b0, b1 := tick(); !b0.Equal(a0) || !b1.Equal(a1) {
		t.Fatalf("changed after the decommission settled:\n%+v\n%+v", b0, b1)
	}
}

// drainCase is one row of a planDrain table: the partition, its factor,
// the members' state, and the step wanted.
type drainCase struct {
	name     string
	a        meta.Assignment
	want     int
	draining func(string) bool
	live     []string
	gone     func(string) bool
	heard    func(string) bool
	act      drainAct
	replicas []string
	to       string
}

// check plans the row's step (leads: partitions each node leads) and
// reports one other than wanted.
func (tc drainCase) check(t *testing.T, leads map[string]int) drainStep {
	t.Helper()
	got := planDrain(tc.a, tc.want, nil, copyView{live: tc.live, draining: tc.draining, gone: tc.gone, heard: tc.heard,
		leads: func(id string) int { return leads[id] }})
	if got.act != tc.act || !slices.Equal(got.replicas, tc.replicas) || got.to != tc.to {
		t.Errorf("%s: got %s %v %q (%s), want %s %v %q", tc.name, got.act, got.replicas, got.to, got.why, tc.act, tc.replicas, tc.to)
	}
	return got
}

func idSet(ids ...string) func(string) bool {
	return func(id string) bool { return slices.Contains(ids, id) }
}

// TestPlanDrainRefusals: each reason a drain step waits, and the order
// of the steps.
func TestPlanDrainRefusals(t *testing.T) {
	set := idSet
	a := func(owner string, inSync []string, replicas ...string) meta.Assignment {
		x := replicated("r", 0, inSync, replicas...)
		x.Owner = owner
		return x
	}
	all := set("b", "c", "d", "e", "f", "g", "n1")
	for _, tc := range []drainCase{
		{name: "nothing draining", a: a("b", []string{"b", "c"}, "b", "c", "n1"), want: 3, draining: set(),
			live: []string{"b", "c", "d", "n1"}, gone: set(), heard: all, act: drainNone},
		{name: "a single copy is the planner's", a: meta.Assignment{Topic: "r", Owner: "b"}, want: 1, draining: set("b"),
			live: []string{"c"}, gone: set(), heard: all, act: drainNone},
		{name: "no node to take a copy", a: a("b", []string{"b", "c", "n1"}, "b", "c", "n1"), want: 3, draining: set("b"),
			live: []string{"c", "n1"}, gone: set(), heard: all, act: drainWait},
		{name: "a replacement joins", a: a("c", []string{"b", "c", "n1"}, "c", "b", "n1"), want: 3, draining: set("b"),
			live: []string{"c", "d", "n1"}, gone: set(), heard: all, act: drainAdd, replicas: []string{"c", "b", "n1", "d"}},
		{name: "the replacement is not in sync", a: a("c", []string{"b", "c", "n1"}, "c", "b", "n1", "d"), want: 3,
			draining: set("b"), live: []string{"c", "d", "n1"}, gone: set(), heard: all, act: drainWait},
		{name: "an alive follower that stays is out of sync", a: a("c", []string{"b", "c", "d"}, "c", "b", "n1", "d"), want: 3,
			draining: set("b"), live: []string{"c", "d", "n1"}, gone: set(), heard: set(), act: drainWait},
		{name: "a dead follower out of sync blocks nothing", a: a("c", []string{"b", "c", "d"}, "c", "b", "n1", "d"), want: 3,
			draining: set("b"), live: []string{"c", "d"}, gone: set("n1"), heard: all, act: drainRemove, replicas: []string{"c", "n1", "d"}},
		{name: "never below a majority in sync", a: a("c", []string{"b", "c"}, "c", "b", "n1", "d"), want: 3,
			draining: set("b"), live: []string{"c"}, gone: set("n1", "d"), heard: all, act: drainWait},
		{name: "the leader drains: elect first", a: a("b", []string{"b", "c", "n1", "d"}, "b", "c", "n1", "d"), want: 3,
			draining: set("b"), live: []string{"c", "d", "n1"}, gone: set(), heard: set("n1", "d"), act: drainElect, to: "n1"},
		{name: "the leader drains, no in-sync copy heard", a: a("b", []string{"b", "c", "n1", "d"}, "b", "c", "n1", "d"), want: 3,
			draining: set("b"), live: []string{"c", "d", "n1"}, gone: set(), heard: set("b"), act: drainWait},
		{name: "already the most copies: remove first", a: a("c", []string{"b", "c", "d", "e", "f"}, "c", "b", "d", "e", "f"),
			want: 5, draining: set("b"), live: []string{"c", "d", "e", "f", "g"}, gone: set(), heard: all,
			act: drainRemove, replicas: []string{"c", "d", "e", "f"}},
	} {
		tc.check(t, nil)
	}
}

// TestPlanDrainMarkedCopy: a copy a rebalance marked leaving goes by the
// decommission's steps (replacement in sync, leadership to the in-sync
// copy that stays and leads fewest, removal), with the mark named while
// it stays; and, its node not draining, the move is called off instead
// of weakening the partition or waiting on what may not come.
func TestPlanDrainMarkedCopy(t *testing.T) {
	set := idSet
	marked := func(owner, leaving string, inSync []string, replicas ...string) meta.Assignment {
		x := replicated("r", 0, inSync, replicas...)
		x.Owner, x.Leaving = owner, leaving
		return x
	}
	live := []string{"b", "c", "d", "e", "n1"}
	all := set(live...)
	leads := map[string]int{"c": 3, "d": 1, "e": 0}
	for _, tc := range []drainCase{
		{name: "the replacement catches up", a: marked("c", "b", []string{"c", "b", "n1"}, "c", "b", "n1", "d"), want: 3,
			draining: set(), live: live, gone: set(), heard: all, act: drainWait},
		{name: "the replacement in sync: the marked copy goes", a: marked("c", "b", []string{"c", "b", "n1", "d"}, "c", "b", "n1", "d"),
			want: 3, draining: set(), live: live, gone: set(), heard: all, act: drainRemove, replicas: []string{"c", "n1", "d"}},
		{name: "the marked copy leads: the copy leading fewest takes over", a: marked("b", "b", []string{"b", "c", "d", "e"}, "b", "c", "d", "e"),
			want: 3, draining: set(), live: live, gone: set(), heard: all, act: drainElect, to: "e"},
		{name: "the factor raised meanwhile: one more replacement, still marked", a: marked("c", "b", []string{"c", "b", "n1", "d"}, "c", "b", "n1", "d"),
			want: 4, draining: set(), live: live, gone: set(), heard: all, act: drainAdd, replicas: []string{"c", "b", "n1", "d", "e"}},
		{name: "the replacement died out of sync: called off", a: marked("c", "b", []string{"c", "b", "n1"}, "c", "b", "n1", "d"), want: 3,
			draining: set(), live: []string{"b", "c", "n1"}, gone: set("d"), heard: all, act: drainCancel},
		{name: "the factor needs every copy, none can be added: called off", a: marked("c", "b", []string{"c", "b", "n1", "d", "e"}, "c", "b", "n1", "d", "e"),
			want: 5, draining: set(), live: live, gone: set(), heard: all, act: drainCancel},
		{name: "no node for the copy the factor needs: called off", a: marked("c", "b", []string{"c", "b", "n1"}, "c", "b", "n1", "d"), want: 4,
			draining: set(), live: []string{"b", "c", "d", "n1"}, gone: set(), heard: all, act: drainCancel},
		{name: "nobody heard to take the lead: called off", a: marked("b", "b", []string{"b", "c", "d", "e"}, "b", "c", "d", "e"), want: 3,
			draining: set(), live: live, gone: set(), heard: set("b"), act: drainCancel},
		{name: "the marked node drains too: a decommission waits, never called off", a: marked("c", "b", []string{"c", "b", "n1"}, "c", "b", "n1", "d"),
			want: 3, draining: set("b"), live: []string{"c", "n1"}, gone: set("d"), heard: all, act: drainRemove, replicas: []string{"c", "n1", "d"}},
		{name: "another copy drains: its replacement joins, the mark kept", a: marked("c", "b", []string{"c", "b", "n1", "d"}, "c", "b", "n1", "d"),
			want: 3, draining: set("n1"), live: []string{"b", "c", "d", "e"}, gone: set(), heard: all, act: drainAdd,
			replicas: []string{"c", "b", "n1", "d", "e"}},
	} {
		if got := tc.check(t, leads); got.act == drainAdd && markKept(tc.a, got.replicas) != tc.a.Leaving {
			t.Errorf("%s: the change adding %v does not name the mark %q", tc.name, got.replicas, tc.a.Leaving)
		}
	}
}
