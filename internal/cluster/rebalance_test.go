package cluster

import (
	"fmt"
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/meta"
)

// inSync is a replicated placement with every copy in sync, led by the
// first.
func inSync(topic string, p int, replicas ...string) meta.Assignment {
	return replicated(topic, p, slices.Clone(replicas), replicas...)
}

// viewOf is a copy view over live receivers, every one heard unless
// silent says otherwise; nobody drains or is gone.
func viewOf(live []string, silent ...string) copyView {
	no := func(string) bool { return false }
	return copyView{live: live, draining: no, gone: no,
		heard: func(id string) bool { return slices.Contains(live, id) && !slices.Contains(silent, id) }}
}

func moveStrings(ms []replicaMove) []string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s/%d %s->%s", m.Topic, m.Partition, m.From, m.To))
	}
	return out
}

// TestPlanReplicaMoves: which copies a rebalance moves, over tables.
func TestPlanReplicaMoves(t *testing.T) {
	rf3 := []meta.Topic{{Name: "t", ReplicationFactor: 3}}
	three := []meta.Assignment{inSync("t", 0, "n1", "n2", "n3"), inSync("t", 1, "n2", "n3", "n1"), inSync("t", 2, "n3", "n1", "n2")}
	four := []string{"n1", "n2", "n3", "n4"}
	with := func(as []meta.Assignment, p int, f func(a *meta.Assignment)) []meta.Assignment {
		out := slices.Clone(as)
		f(&out[p])
		return out
	}
	marked := func(a *meta.Assignment) {
		a.Replicas, a.Leaving = append(slices.Clone(a.Replicas), "n4"), a.Replicas[1]
	}
	for _, tc := range []struct {
		name   string
		topics []meta.Topic
		as     map[string][]meta.Assignment
		v      copyView
		want   []string
	}{
		{name: "a new node: from the fullest, followers' copies, until within one",
			topics: rf3, as: map[string][]meta.Assignment{"t": three}, v: viewOf(four),
			want: []string{"t/1 n1->n4", "t/0 n2->n4"}},
		{name: "balanced: nothing", topics: rf3, as: map[string][]meta.Assignment{"t": three}, v: viewOf([]string{"n1", "n2", "n3"})},
		{name: "the new node silent: nothing", topics: rf3, as: map[string][]meta.Assignment{"t": three}, v: viewOf(four, "n4")},
		{name: "a copy on a silent node: that partition stays", topics: rf3, as: map[string][]meta.Assignment{"t": three},
			v: viewOf(four, "n3")},
		{name: "a copy out of sync: that partition stays", topics: rf3,
			as: map[string][]meta.Assignment{"t": with(three, 0, func(a *meta.Assignment) { a.InSync = a.InSync[:2] })}, v: viewOf(four),
			want: []string{"t/1 n1->n4", "t/2 n2->n4"}},
		{name: "a move in flight counts at its destination", topics: rf3,
			as: map[string][]meta.Assignment{"t": with(three, 0, marked)}, v: viewOf(four), want: []string{"t/1 n1->n4"}},
		{name: "below its factor: the reconcile's first", topics: []meta.Topic{{Name: "t", ReplicationFactor: 4}},
			as: map[string][]meta.Assignment{"t": three}, v: viewOf(four)},
		{name: "at the most copies: never moved (the replacement joins first)",
			topics: []meta.Topic{{Name: "t", ReplicationFactor: 5}},
			as:     map[string][]meta.Assignment{"t": {inSync("t", 0, "n1", "n2", "n3", "n4", "n5")}}, v: viewOf([]string{"n1", "n2", "n3", "n4", "n5", "n6"})},
		{name: "the leader's copy when no follower's can go", topics: []meta.Topic{{Name: "t", ReplicationFactor: 2}},
			as: map[string][]meta.Assignment{"t": {inSync("t", 0, "n1", "n2"), inSync("t", 1, "n1", "n3")}},
			v:  viewOf([]string{"n1", "n2", "n3", "n4"}), want: []string{"t/0 n1->n4"}},
		{name: "a follower's copy before the leader's", topics: []meta.Topic{{Name: "t", ReplicationFactor: 2}},
			as: map[string][]meta.Assignment{"t": {inSync("t", 0, "n1", "n2"), inSync("t", 1, "n3", "n1")}},
			v:  viewOf([]string{"n1", "n2", "n3", "n4"}), want: []string{"t/1 n1->n4"}},
		{name: "a child's copy kept off its parent's copies where balance allows",
			topics: []meta.Topic{{Name: "c", ReplicationFactor: 2, Parent: "p"}, {Name: "p", Children: []string{"c"}}},
			as: map[string][]meta.Assignment{
				"p": {{Topic: "p", Partition: 0, Owner: "n3"}, {Topic: "p", Partition: 1, Owner: "n4"}},
				"c": {inSync("c", 0, "n1", "n2"), inSync("c", 1, "n1", "n2")},
			}, v: viewOf(four), want: []string{"c/0 n1->n4", "c/1 n2->n3"}},
	} {
		got := moveStrings(planReplicaMoves(tc.topics, tc.as, tc.v))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: planned %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPlanReplicaMovesBounded: at most MaxReplicaMovesInFlight partitions
// carry a mark at once, those marked before included.
func TestPlanReplicaMovesBounded(t *testing.T) {
	var as []meta.Assignment
	for p := range 12 {
		as = append(as, inSync("t", p, "n1", "n2"))
	}
	topics := []meta.Topic{{Name: "t", ReplicationFactor: 2}}
	live := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	if got := planReplicaMoves(topics, map[string][]meta.Assignment{"t": as}, viewOf(live)); len(got) != MaxReplicaMovesInFlight {
		t.Fatalf("%d moves planned, want %d: %v", len(got), MaxReplicaMovesInFlight, moveStrings(got))
	}
	as[5].Replicas, as[5].Leaving = []string{"n1", "n2", "n3"}, "n2"
	if got := planReplicaMoves(topics, map[string][]meta.Assignment{"t": as}, viewOf(live)); len(got) != MaxReplicaMovesInFlight-1 {
		t.Fatalf("one marked already: %d moves planned, want %d", len(got), MaxReplicaMovesInFlight-1)
	}
}

// TestPlanLeaders: an election for balance only from a node leading two
// more than another copy's node, of a partition fully in sync; the copy
// leading fewest takes over; one a tick.
func TestPlanLeaders(t *testing.T) {
	live := []string{"n1", "n2", "n3"}
	for _, tc := range []struct {
		name string
		as   []meta.Assignment
		v    copyView
		want string
	}{
		{name: "n1 leads all three", as: []meta.Assignment{inSync("t", 0, "n1", "n2", "n3"), inSync("t", 1, "n1", "n3", "n2"),
			inSync("t", 2, "n1", "n2", "n3")}, v: viewOf(live), want: "t/0 n1->n2"},
		{name: "the copy leading fewest", as: []meta.Assignment{inSync("t", 0, "n1", "n2", "n3"), inSync("t", 1, "n1", "n3", "n2"),
			inSync("t", 2, "n1", "n2", "n3"), inSync("t", 3, "n2", "n3", "n1")}, v: viewOf(live), want: "t/0 n1->n3"},
		{name: "within one: nothing", as: []meta.Assignment{inSync("t", 0, "n1", "n2", "n3"), inSync("t", 1, "n2", "n3", "n1")},
			v: viewOf(live)},
		{name: "out of sync: nothing", as: []meta.Assignment{replicated("t", 0, []string{"n1", "n3"}, "n1", "n2", "n3"),
			replicated("t", 1, []string{"n1", "n2"}, "n1", "n2", "n3")}, v: viewOf(live)},
		{name: "only between copies of the partition", as: []meta.Assignment{inSync("t", 0, "n1", "n2"), inSync("t", 1, "n1", "n2"),
			inSync("t", 2, "n2", "n1")}, v: viewOf(live)},
		{name: "two copies: never (the old leader leaves the in-sync set, one is under a majority)", as: []meta.Assignment{
			inSync("t", 0, "n1", "n2"), inSync("t", 1, "n1", "n2"), inSync("t", 2, "n1", "n3"), inSync("t", 3, "n1", "n3")},
			v: viewOf(live)},
		{name: "a copy silent: nothing", as: []meta.Assignment{inSync("t", 0, "n1", "n2"), inSync("t", 1, "n1", "n2")},
			v: viewOf([]string{"n1", "n2"}, "n2")},
	} {
		var got []string
		for _, m := range planLeaders(map[string][]meta.Assignment{"t": tc.as}, tc.v) {
			got = append(got, fmt.Sprintf("%s/%d %s->%s", m.Topic, m.Partition, m.From, m.To))
		}
		if want := []string{tc.want}; (tc.want == "" && len(got) != 0) || (tc.want != "" && !slices.Equal(got, want)) {
			t.Errorf("%s: planned %v, want %q", tc.name, got, tc.want)
		}
	}
}
