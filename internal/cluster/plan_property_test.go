package cluster

import (
	"fmt"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/narad-io/narad/internal/meta"
)

// planState is a random cluster: members alive, dead or draining, topics
// (the first child of the second when there are two or more, so the
// anti-affinity preference is exercised) whose partitions are owned by a
// member or by nobody, some of them mid-move.
type planState struct {
	members []meta.Member
	topics  map[string]meta.Topic
	as      map[string][]meta.Assignment
}

func drawPlanState(rt *rapid.T, withTargets bool) planState {
	n := rapid.IntRange(1, 6).Draw(rt, "members")
	var st planState
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i+1)
		m := meta.Member{ID: ids[i], State: meta.MemberAlive}
		if rapid.IntRange(0, 4).Draw(rt, "dead?"+ids[i]) == 0 {
			m.State = meta.MemberDead
		}
		m.Draining = rapid.IntRange(0, 4).Draw(rt, "draining?"+ids[i]) == 0
		st.members = append(st.members, m)
	}
	owners := append([]string{""}, ids...)
	st.topics = map[string]meta.Topic{}
	st.as = map[string][]meta.Assignment{}
	nt := rapid.IntRange(1, 4).Draw(rt, "topics")
	for ti := 0; ti < nt; ti++ {
		name := fmt.Sprintf("t%d", ti)
		parts := rapid.IntRange(1, 12).Draw(rt, "partitions of "+name)
		top := meta.Topic{Name: name, Partitions: parts}
		if ti == 0 && nt > 1 {
			top.Parent = "t1"
		}
		if ti == 1 {
			top.Children = []string{"t0"}
		}
		st.topics[name] = top
		for p := 0; p < parts; p++ {
			a := meta.Assignment{Topic: name, Partition: p, Owner: rapid.SampledFrom(owners).Draw(rt, "owner")}
			if a.Owner != "" && rapid.IntRange(0, 4).Draw(rt, "replicated?") == 0 {
				// A replicated partition: the planner leaves it alone.
				a.Replicas, a.LeaderEpoch = []string{a.Owner, "elsewhere"}, 1
				a.InSync = a.Replicas
				st.as[name] = append(st.as[name], a)
				continue
			}
			if withTargets && a.Owner != "" && rapid.IntRange(0, 3).Draw(rt, "moving?") == 0 {
				if to := rapid.SampledFrom(ids).Draw(rt, "target"); to != a.Owner {
					a.Target = to
				}
			}
			st.as[name] = append(st.as[name], a)
		}
	}
	return st
}

// checkPlanSafety: the rules every plan keeps, in any state.
func checkPlanSafety(rt *rapid.T, st planState, moves []Move) {
	state := map[string]meta.Member{}
	for _, m := range st.members {
		state[m.ID] = m
	}
	inFlight := 0
	for _, list := range st.as {
		for _, a := range list {
			if a.Target != "" && a.Owner != "" && state[a.Owner].State != meta.MemberDead {
				inFlight++
			}
		}
	}
	if inFlight >= MaxMovesInFlight && len(moves) > 0 {
		rt.Fatalf("%d moves in flight, and %d more planned", inFlight, len(moves))
	}
	if inFlight+len(moves) > max(inFlight, MaxMovesInFlight) {
		rt.Fatalf("%d in flight + %d planned is over %d", inFlight, len(moves), MaxMovesInFlight)
	}
	seen := map[string]bool{}
	for _, m := range moves {
		key := fmt.Sprintf("%s/%d", m.Topic, m.Partition)
		if seen[key] {
			rt.Fatalf("partition %s moved twice in one plan", key)
		}
		seen[key] = true
		list := st.as[m.Topic]
		if m.Partition < 0 || m.Partition >= len(list) {
			rt.Fatalf("move %+v names no partition", m)
		}
		a := list[m.Partition]
		if a.Replicated() {
			rt.Fatalf("move %+v of a replicated partition", m)
		}
		if a.Target != "" {
			rt.Fatalf("move %+v of a partition already moving to %s", m, a.Target)
		}
		if a.Owner != m.From || m.From == m.To {
			rt.Fatalf("move %+v of a partition owned by %q", m, a.Owner)
		}
		if from, ok := state[m.From]; !ok || from.State == meta.MemberDead {
			rt.Fatalf("move %+v from a dead or unknown owner: its disk holds the only copy", m)
		}
		if to, ok := state[m.To]; !ok || to.State == meta.MemberDead || to.Draining {
			rt.Fatalf("move %+v to a member that is not a receiver (%+v)", m, to)
		}
	}
}

// TestPlanProperties, in states with moves in flight: at most 8 moves at
// once, never from or to a dead member, never to a draining one, never a
// partition already moving or twice in one plan; and deterministic.
func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		st := drawPlanState(rt, true)
		moves := Plan(st.members, st.topics, st.as)
		checkPlanSafety(rt, st, moves)
		again := Plan(st.members, st.topics, st.as)
		if fmt.Sprint(again) != fmt.Sprint(moves) {
			rt.Fatalf("same state, different plans:\n%v\n%v", moves, again)
		}
	})
}

// TestPlanQuotaProperties, in settled states (nothing moving): the plan
// is exactly the fewest moves that reach the quotas of the planner, cut
// at 8 — every receiver ends with ⌊T/R⌋ or ⌈T/R⌉ of the T live-owned
// partitions, a draining member with none, a dead member keeps all of
// its own. The quotas and the minimum are computed here from the rule.
func TestPlanQuotaProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		st := drawPlanState(rt, false)
		moves := Plan(st.members, st.topics, st.as)
		checkPlanSafety(rt, st, moves)

		alive, receiver := map[string]bool{}, map[string]bool{}
		var receivers []string
		for _, m := range st.members {
			if m.State != meta.MemberDead {
				alive[m.ID] = true
				if !m.Draining {
					receiver[m.ID] = true
					receivers = append(receivers, m.ID)
				}
			}
		}
		before := map[string]int{}
		total := 0
		for _, list := range st.as {
			for _, a := range list {
				if a.Replicated() {
					continue // not the planner's
				}
				before[a.Owner]++
				if alive[a.Owner] {
					total++
				}
			}
		}
		if len(receivers) == 0 {
			if len(moves) != 0 {
				rt.Fatalf("no receiver, yet %d moves", len(moves))
			}
			return
		}
		lo, hi := total/len(receivers), (total+len(receivers)-1)/len(receivers)
		// The fewest moves: everything off draining members, plus each
		// receiver's excess when the ⌈T/R⌉ slots go to the fullest.
		need := 0
		var recvCounts []int
		for id := range alive {
			if receiver[id] {
				recvCounts = append(recvCounts, before[id])
			} else {
				need += before[id]
			}
		}
		sort.Sort(sort.Reverse(sort.IntSlice(recvCounts)))
		for i, c := range recvCounts {
			q := lo
			if i < total%len(receivers) {
				q++
			}
			need += max(0, c-q)
		}
		if want := min(need, MaxMovesInFlight); len(moves) != want {
			rt.Fatalf("%d moves planned, want %d (fewest to balance %d partitions over %d receivers: %d, cut at %d)",
				len(moves), want, total, len(receivers), need, MaxMovesInFlight)
		}
		if need > MaxMovesInFlight {
			return // the next plan, after these complete, goes on
		}
		after := map[string]int{}
		for k, v := range before {
			after[k] = v
		}
		for _, m := range moves {
			after[m.From]--
			after[m.To]++
		}
		for _, m := range st.members {
			c := after[m.ID]
			switch {
			case m.State == meta.MemberDead:
				if c != before[m.ID] {
					rt.Fatalf("dead %s went from %d to %d partitions", m.ID, before[m.ID], c)
				}
			case m.Draining:
				if c != 0 {
					rt.Fatalf("draining %s keeps %d partitions", m.ID, c)
				}
			case c < lo || c > hi:
				rt.Fatalf("%s ends with %d partitions, quota is %d..%d (T=%d, R=%d)", m.ID, c, lo, hi, total, len(receivers))
			}
		}
	})
}
