package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/narad-io/narad/internal/meta"
)

// copyModel is the metastore's placement rules in memory: a proposal
// applies by meta's own rule (SetReplicasCmd.Apply, ElectLeaderCmd.Apply)
// and is checked against what the copy work promises (doc.go, copies.go)
// before it does. Members are dead, draining, silent (alive, not heard
// this tick) or lost (not heard for longer than the heal bound: their
// copies are re-created elsewhere) as the test says.
type copyModel struct {
	rt                     *rapid.T
	ids                    []string
	topics                 map[string]meta.Topic
	as                     map[string][]meta.Assignment
	dead, draining, silent map[string]bool
	lost                   map[string]bool
	withLost               bool // members are lost (drawn, and in chaos)
	proposals              int  // this tick's
	balanceElections       int  // this tick's
}

func (m *copyModel) Topics() []meta.Topic {
	var out []meta.Topic
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range m.topics {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, m.topics[name])
	}
	return out
}

func (m *copyModel) Assignments(topic string) []meta.Assignment {
	out := slices.Clone(m.as[topic])
	for i := range out {
		out[i].Replicas, out[i].InSync = slices.Clone(out[i].Replicas), slices.Clone(out[i].InSync)
	}
	return out
}

func (m *copyModel) view() copyView {
	var live []string
	for _, id := range m.ids {
		if !m.dead[id] && !m.draining[id] && !m.lost[id] {
			live = append(live, id)
		}
	}
	return copyView{live: live, draining: func(id string) bool { return m.draining[id] },
		gone:  func(id string) bool { return m.dead[id] || !slices.Contains(m.ids, id) },
		lost:  func(id string) bool { return m.lost[id] },
		heard: func(id string) bool { return slices.Contains(m.ids, id) && !m.dead[id] && !m.silent[id] && !m.lost[id] }}
}

func (m *copyModel) want(topic string) int { return max(1, m.topics[topic].ReplicationFactor) }

func (m *copyModel) marks() int {
	n := 0
	for _, list := range m.as {
		for _, a := range list {
			if a.Leaving != "" {
				n++
			}
		}
	}
	return n
}

// leaderCounts is how many replicated partitions each receiver leads.
func (m *copyModel) leaderCounts() map[string]int {
	live := m.view().live
	out := map[string]int{}
	for _, list := range m.as {
		for _, a := range list {
			if a.Replicated() && slices.Contains(live, a.Owner) {
				out[a.Owner]++
			}
		}
	}
	return out
}

// rebalanceable is the test's own reading of a partition a rebalance may
// touch: every copy in sync, on a live node heard from, none leaving.
func (m *copyModel) rebalanceable(a meta.Assignment) bool {
	if !a.Replicated() || a.Leaving != "" || len(a.InSync) != len(a.Replicas) {
		return false
	}
	for _, id := range a.Replicas {
		if m.dead[id] || m.draining[id] || m.silent[id] || m.lost[id] {
			return false
		}
	}
	return true
}

// healable is the test's own reading of a partition whose copy on id a
// heal may move: id is lost and not the leader, the leader is heard, no
// copy leaves (marked or draining), and it holds exactly its factor.
func (m *copyModel) healable(a meta.Assignment, id string) bool {
	if !a.Replicated() || a.Leaving != "" || !m.lost[id] || id == a.Owner || !slices.Contains(a.Replicas, id) ||
		m.dead[a.Owner] || m.silent[a.Owner] || m.lost[a.Owner] || len(a.Replicas) != m.want(a.Topic) {
		return false
	}
	return !slices.ContainsFunc(a.Replicas, func(x string) bool { return m.draining[x] })
}

func (m *copyModel) SetReplicas(_ context.Context, topic string, p int, epoch uint64, replicas []string, leaving string) error {
	m.proposals++
	cur := m.as[topic][p]
	next, err := meta.SetReplicasCmd{Topic: topic, Partition: p, Epoch: epoch, Replicas: slices.Clone(replicas), Leaving: leaving}.Apply(cur)
	if err != nil {
		m.rt.Fatalf("proposed replicas %v (leaving %q) for %+v, which the metastore refuses: %v", replicas, leaving, cur, err)
	}
	m.checkReplicas(cur, next)
	m.as[topic][p] = next
	return nil
}

func (m *copyModel) ElectLeader(_ context.Context, topic string, p int, epoch uint64, to string) error {
	m.proposals++
	cur := m.as[topic][p]
	next, err := meta.ElectLeaderCmd{Topic: topic, Partition: p, Epoch: epoch, To: to}.Apply(cur)
	if err != nil {
		m.rt.Fatalf("proposed %s to lead %+v, which the metastore refuses: %v", to, cur, err)
	}
	if m.dead[to] || m.silent[to] || m.lost[to] {
		m.rt.Fatalf("%s, not heard from, elected to lead %+v", to, cur)
	}
	switch leaves := cur.Owner == cur.Leaving || m.draining[cur.Owner]; {
	case leaves && (to == cur.Leaving || m.draining[to]):
		m.rt.Fatalf("the leadership of %+v handed from a leaving copy to another leaving copy, %s", cur, to)
	case !leaves:
		// Only for balance (failover is not under test here).
		l := m.leaderCounts()
		if !m.rebalanceable(cur) || l[cur.Owner]-l[to] < 2 {
			m.rt.Fatalf("an election for balance of %+v from %s (leads %d) to %s (leads %d)", cur, cur.Owner, l[cur.Owner], to, l[to])
		}
		if len(next.InSync) < meta.Majority(len(next.Replicas)) {
			m.rt.Fatalf("an election for balance of %+v leaves too few in sync: %+v", cur, next)
		}
		if m.balanceElections++; m.balanceElections > LeaderMovesPerTick {
			m.rt.Fatalf("%d elections for balance in one tick", m.balanceElections)
		}
	}
	m.as[topic][p] = next
	return nil
}

// checkReplicas holds a replica change to the rules: never past the
// factor by adding, a move started only on a partition fit for it and
// within the bound, a copy not leaving removed only by a lowered factor
// on a partition with nothing leaving, a leaving copy removed only with
// every copy that stays alive in sync and a majority in sync and never
// below the factor (but a decommission at the most copies), and a move
// called off only when optional.
func (m *copyModel) checkReplicas(cur, next meta.Assignment) {
	want := m.want(cur.Topic)
	old := cur.Replicas
	if len(old) == 0 {
		old = []string{cur.Owner}
	}
	staying := func(a meta.Assignment, rs []string) int {
		n := 0
		for _, id := range rs {
			if id != a.Leaving && !m.draining[id] {
				n++
			}
		}
		return n
	}
	var added, removed []string
	for _, id := range next.Replicas {
		if !slices.Contains(old, id) {
			added = append(added, id)
			if m.dead[id] || m.draining[id] || m.lost[id] {
				m.rt.Fatalf("%s, dead, draining or lost, added to %+v", id, cur)
			}
		}
	}
	for _, id := range old {
		if !slices.Contains(next.Replicas, id) {
			removed = append(removed, id)
		}
	}
	if len(added) > 0 && staying(next, next.Replicas) > max(want, staying(cur, old)) {
		m.rt.Fatalf("%v added to %+v: %d copies stay, the factor is %d", added, cur, staying(next, next.Replicas), want)
	}
	if cur.Leaving == "" && next.Leaving != "" &&
		(len(added) != 1 || len(removed) != 0 || len(old) != want || want >= meta.MaxReplicationFactor ||
			!(m.rebalanceable(cur) || m.healable(cur, next.Leaving)) || m.silent[added[0]] || m.marks() >= MaxReplicaMovesInFlight) {
		m.rt.Fatalf("a move started on %+v: %+v (%d marked before, factor %d)", cur, next, m.marks(), want)
	}
	if cur.Leaving != "" && next.Leaving == "" && slices.Equal(old, next.Replicas) &&
		(m.draining[cur.Leaving] || (m.lost[cur.Leaving] && len(old) < meta.MaxReplicationFactor)) {
		m.rt.Fatalf("the decommission or heal of %s's copy of %+v called off", cur.Leaving, cur)
	}
	nothingLeaving := cur.Leaving == "" && !slices.ContainsFunc(old, func(id string) bool { return m.draining[id] })
	for _, id := range removed {
		if id != cur.Leaving && !m.draining[id] &&
			(!nothingLeaving || len(old) <= want || len(next.Replicas) != want || len(added) > 0) {
			m.rt.Fatalf("%s, not leaving, removed from %+v (factor %d): %+v", id, cur, want, next)
		}
	}
	if len(removed) == 0 || !(removed[0] == cur.Leaving || m.draining[removed[0]]) {
		return
	}
	for _, id := range next.Replicas {
		if !m.dead[id] && !m.lost[id] && !slices.Contains(next.InSync, id) {
			m.rt.Fatalf("leaving copies %v removed from %+v while %s, which stays, is out of sync", removed, cur, id)
		}
	}
	if len(next.InSync) < meta.Majority(len(next.Replicas)) {
		m.rt.Fatalf("leaving copies %v removed from %+v with too few in sync: %+v", removed, cur, next)
	}
	decommissionAtMost := len(old) == meta.MaxReplicationFactor && !slices.ContainsFunc(removed, func(id string) bool { return !m.draining[id] })
	if len(next.Replicas) < want && !decommissionAtMost {
		m.rt.Fatalf("leaving copies %v removed from %+v below the factor %d", removed, cur, want)
	}
}

// env is one tick of the world outside the controller: followers catch
// up (each out of sync copy on a live node, one time in two), a dead
// or lost leader is replaced by failover, a lost copy neither catches up
// nor is heard; with chaos also in-sync copies lag out (never below a
// majority), members die, return, drain, fall silent, are lost or come
// back, and factors change.
func (m *copyModel) env(r *rand.Rand, chaos bool) {
	m.silent = map[string]bool{}
	if chaos {
		for _, id := range m.ids {
			m.silent[id] = r.IntN(10) == 0
		}
		if r.IntN(10) == 0 {
			id := m.ids[r.IntN(len(m.ids))]
			m.dead[id] = !m.dead[id]
		}
		if r.IntN(15) == 0 {
			m.draining[m.ids[r.IntN(len(m.ids))]] = true
		}
		if m.withLost && r.IntN(8) == 0 {
			id := m.ids[r.IntN(len(m.ids))]
			m.lost[id] = !m.lost[id]
		}
		if r.IntN(15) == 0 {
			names := slices.Collect(func(yield func(string) bool) {
				for _, t := range m.Topics() {
					if !yield(t.Name) {
						return
					}
				}
			})
			t := m.topics[names[r.IntN(len(names))]]
			t.ReplicationFactor = 1 + r.IntN(meta.MaxReplicationFactor)
			m.topics[t.Name] = t
		}
	}
	for _, t := range m.Topics() {
		for p, a := range m.as[t.Name] {
			if !a.Replicated() {
				continue
			}
			if m.dead[a.Owner] || m.lost[a.Owner] {
				for _, id := range a.InSync {
					if !m.dead[id] && !m.lost[id] && id != a.Owner {
						a, _ = meta.ElectLeaderCmd{Topic: t.Name, Partition: p, Epoch: a.LeaderEpoch, To: id}.Apply(a)
						break
					}
				}
			}
			var in []string
			for _, id := range a.Replicas {
				switch {
				case slices.Contains(a.InSync, id):
					if chaos && id != a.Owner && r.IntN(10) == 0 && len(a.InSync)-1 >= meta.Majority(len(a.Replicas)) {
						continue // lags out
					}
					in = append(in, id)
				case !m.dead[id] && !m.lost[id] && r.IntN(2) == 0:
					in = append(in, id)
				}
			}
			a.InSync = in
			m.as[t.Name][p] = a
		}
	}
}

// drawCopyModel draws members (some dead, some draining, with withLost
// some lost), up to three
// topics (the first a child of the second) of factor 1..5 and their
// placements: any shape the metastore allows — more or fewer copies than
// the factor, copies out of sync, a copy marked leaving.
func drawCopyModel(rt *rapid.T, withLost bool) *copyModel {
	m := &copyModel{rt: rt, withLost: withLost, topics: map[string]meta.Topic{}, as: map[string][]meta.Assignment{},
		dead: map[string]bool{}, draining: map[string]bool{}, silent: map[string]bool{}, lost: map[string]bool{}}
	n := rapid.IntRange(2, 7).Draw(rt, "members")
	for i := range n {
		id := fmt.Sprintf("n%d", i+1)
		m.ids = append(m.ids, id)
		m.dead[id] = rapid.IntRange(0, 6).Draw(rt, "dead?"+id) == 0
		m.draining[id] = rapid.IntRange(0, 6).Draw(rt, "draining?"+id) == 0
		if withLost {
			m.lost[id] = rapid.IntRange(0, 5).Draw(rt, "lost?"+id) == 0
		}
	}
	nt := rapid.IntRange(1, 3).Draw(rt, "topics")
	for ti := range nt {
		name := fmt.Sprintf("t%d", ti)
		top := meta.Topic{Name: name, ReplicationFactor: rapid.IntRange(1, meta.MaxReplicationFactor).Draw(rt, "factor of "+name)}
		if ti == 0 && nt > 1 {
			top.Parent = "t1"
		}
		if ti == 1 {
			top.Children = []string{"t0"}
		}
		top.Partitions = rapid.IntRange(1, 6).Draw(rt, "partitions of "+name)
		m.topics[name] = top
		for p := range top.Partitions {
			k := rapid.IntRange(1, min(n, meta.MaxReplicationFactor)).Draw(rt, "copies")
			perm := rapid.Permutation(m.ids).Draw(rt, "nodes")
			replicas := perm[:k]
			a := meta.Assignment{Topic: name, Partition: p, Owner: replicas[0], Replicas: replicas, InSync: []string{replicas[0]},
				LeaderEpoch: 1}
			for _, id := range replicas[1:] { // in replica order, as the metastore keeps it
				if rapid.Bool().Draw(rt, "in sync?") {
					a.InSync = append(a.InSync, id)
				}
			}
			if k >= 2 && rapid.IntRange(0, 4).Draw(rt, "marked?") == 0 {
				a.Leaving = rapid.SampledFrom(replicas).Draw(rt, "leaving")
			}
			m.as[name] = append(m.as[name], a)
		}
	}
	return m
}

// TestCopyWorkProperties runs the controller's copy work (copyWork.tick:
// leaving copies, the factor, heals, rebalance moves, leadership spread)
// over random placements, first with members dying, returning, draining,
// falling silent, being lost and coming back and factors changing, then in a calm world where
// followers catch up. Every change it proposes is one the metastore's own
// rule accepts and keeps the rules of checkReplicas and ElectLeader
// above (never past or below the factor on its own account, never below
// a majority in sync, a replacement never dropped while its move stands,
// at most MaxReplicaMovesInFlight moves and LeaderMovesPerTick balance
// elections, a heal started only for a lost follower's copy of a
// partition at its factor, and never called off while its node stays
// lost); and in the calm world it reaches a state where ticks propose
// nothing, with no rebalance move left standing, no heal standing that
// could go on nor one not started that could, the factor met
// wherever nothing leaves, copies and leaderships as even as moves and
// elections between in-sync copies can make them.
//
// It runs twice: without lost members (the cases found so far replay as
// they were found), and with them.
func TestCopyWorkProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { runCopyWork(rt, drawCopyModel(rt, false)) })
}

// TestCopyWorkPropertiesWithLostMembers: the same, some members lost.
func TestCopyWorkPropertiesWithLostMembers(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { runCopyWork(rt, drawCopyModel(rt, true)) })
}

// runCopyWork is one case of the properties above.
func runCopyWork(rt *rapid.T, m *copyModel) {
	r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 0))
	tick := func(chaos bool) int {
		m.env(r, chaos)
		m.proposals, m.balanceElections = 0, 0
		newCopyWork(m, slog.New(slog.DiscardHandler), m.view(), nil).tick(context.Background())
		return m.proposals
	}
	for range rapid.IntRange(0, 30).Draw(rt, "chaos ticks") {
		tick(true)
	}
	calm := 0
	for i := 0; calm < 3; i++ {
		if i == 500 {
			rt.Fatalf("no rest after 500 calm ticks: the steps fight (%d proposals in the last)", m.proposals)
		}
		if tick(false) == 0 && m.allCaughtUp() {
			calm++
		} else {
			calm = 0
		}
	}
	m.checkSettled()
}

// healBlocked is the test's own reading of a heal (a marked copy on a
// lost node) that cannot go on: fewer copies would stay than the
// factor, too few in sync would stay, or the leader leaves (lost or
// draining) and no in-sync copy that stays is heard.
func (m *copyModel) healBlocked(a meta.Assignment) bool {
	var keep, inSync []string
	for _, id := range a.Replicas {
		if id != a.Leaving && !m.draining[id] {
			keep = append(keep, id)
			if slices.Contains(a.InSync, id) {
				inSync = append(inSync, id)
			}
		}
	}
	heard := slices.ContainsFunc(inSync, func(id string) bool { return !m.dead[id] && !m.lost[id] && !m.silent[id] })
	leaderLeaves := a.Owner == a.Leaving || m.draining[a.Owner]
	return len(keep) < m.want(a.Topic) || len(inSync) < meta.Majority(len(keep)) || (leaderLeaves && !heard)
}

func (m *copyModel) allCaughtUp() bool {
	for _, list := range m.as {
		for _, a := range list {
			for _, id := range a.Replicas {
				if !m.dead[id] && !m.lost[id] && !slices.Contains(a.InSync, id) {
					return false
				}
			}
		}
	}
	return true
}

// checkSettled: at rest, no rebalance move stands, the factor is met
// wherever nothing leaves (or every live node holds a copy), no healthy
// partition's copy could move from a node holding two more copies than
// another, none's leadership from a node leading two more than another
// copy's node; with every partition movable, copies are within one.
func (m *copyModel) checkSettled() {
	v := m.view()
	count := map[string]int{}
	allMovable := true
	for _, t := range m.Topics() {
		want := m.want(t.Name)
		for _, a := range m.as[t.Name] {
			if a.Leaving != "" && !m.draining[a.Leaving] && !(m.lost[a.Leaving] && m.healBlocked(a)) {
				m.rt.Fatalf("at rest, a rebalance move or a heal that could go on stands: %+v", a)
			}
			for _, id := range a.Replicas {
				if m.healable(a, id) && m.marks() < MaxReplicaMovesInFlight &&
					slices.ContainsFunc(v.live, func(d string) bool { return !slices.Contains(a.Replicas, d) }) &&
					want < meta.MaxReplicationFactor {
					m.rt.Fatalf("at rest, %s's copy of %+v is lost and a receiver is free, yet no heal started", id, a)
				}
			}
			rs := a.Replicas
			if len(rs) == 0 {
				rs = []string{a.Owner}
			}
			if a.Leaving == "" && !slices.ContainsFunc(rs, func(id string) bool { return m.draining[id] }) && len(rs) != want &&
				(len(rs) > want || slices.ContainsFunc(v.live, func(id string) bool { return !slices.Contains(rs, id) })) {
				m.rt.Fatalf("at rest, %+v has %d copies, the factor is %d (live %v)", a, len(rs), want, v.live)
			}
			if a.Replicated() {
				for _, id := range a.Replicas {
					if id != a.Leaving && slices.Contains(v.live, id) {
						count[id]++
					}
				}
				if !m.rebalanceable(a) || len(a.Replicas) != want || want >= meta.MaxReplicationFactor {
					allMovable = false
				}
			}
		}
	}
	leads := m.leaderCounts()
	for _, list := range m.as {
		for _, a := range list {
			if !m.rebalanceable(a) {
				continue
			}
			for _, s := range a.Replicas {
				for _, d := range v.live {
					if !slices.Contains(a.Replicas, d) && count[s]-count[d] >= 2 && len(a.Replicas) == m.want(a.Topic) &&
						len(a.Replicas) < meta.MaxReplicationFactor {
						m.rt.Fatalf("at rest, %s holds %d copies and %s %d, yet %+v could move", s, count[s], d, count[d], a)
					}
				}
				if s != a.Owner && leads[a.Owner]-leads[s] >= 2 && len(a.InSync)-1 >= meta.Majority(len(a.Replicas)) {
					m.rt.Fatalf("at rest, %s leads %d and %s %d, yet %+v could change leader", a.Owner, leads[a.Owner], s, leads[s], a)
				}
			}
		}
	}
	if allMovable && len(v.live) > 0 {
		var cs []int
		for _, id := range v.live {
			cs = append(cs, count[id])
		}
		sort.Ints(cs)
		if cs[len(cs)-1]-cs[0] > 1 {
			m.rt.Fatalf("at rest, with every partition movable, copies per node %v are not within one", count)
		}
	}
}

// TestRebalancePlansAreDeterministic: the same state plans the same
// moves and elections, whatever order the maps hand it over in.
func TestRebalancePlansAreDeterministic(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := drawCopyModel(rt, true)
		v := m.view()
		first := fmt.Sprint(planReplicaMoves(m.Topics(), m.as, v), planLeaders(m.as, v))
		for range 5 {
			again := map[string][]meta.Assignment{}
			for k, list := range m.as {
				again[k] = list
			}
			if got := fmt.Sprint(planReplicaMoves(m.Topics(), again, v), planLeaders(again, v)); got != first {
				rt.Fatalf("same state, different plans:\n%s\n%s", first, got)
			}
		}
	})
}
