package cluster

import (
	"sort"

	"github.com/narad-io/narad/internal/meta"
)

// MaxMovesInFlight bounds the moves the planner keeps going at once.
const MaxMovesInFlight = 8

// Move is one planned move: a partition and where it should go.
type Move struct {
	Topic     string
	Partition int
	From, To  string
}

// Plan returns the fewest new moves that balance owned-partition counts
// over the receivers — live, non-draining members — (docs/operations.md,
// "Partitions and moves"): each receiver ends with ⌊T/R⌋ or ⌈T/R⌉ of the
// T partitions whose owners are alive, the fullest keeping the ⌈⌉ slots; a
// draining member's quota is 0. A partition mid-move counts at its destination and
// is not moved again; dead owners' partitions stay put (their disk holds
// the only copy); at most MaxMovesInFlight moves exist at once. Replicated
// partitions are neither counted nor moved here: the metastore refuses a
// target on one; their copies are balanced by planReplicaMoves
// (rebalance.go) and leave a node by moveCopies (add a replacement, wait
// until it is in sync, move the leadership, remove). Among
// candidate destinations, one that is not the owner of the same partition
// of the topic's parent (or child) is preferred — anti-affinity is a
// preference here, balance wins. topics is every topic record by name (for
// parent links); as every topic's assignments. Deterministic: the same
// state plans the same moves on any node.
func Plan(members []meta.Member, topics map[string]meta.Topic, as map[string][]meta.Assignment) []Move {
	alive := map[string]bool{}
	var receivers []string
	for _, m := range members {
		if m.State == meta.MemberDead {
			continue
		}
		alive[m.ID] = true
		if !m.Draining {
			receivers = append(receivers, m.ID)
		}
	}
	if len(receivers) == 0 {
		return nil
	}
	sort.Strings(receivers)
	count := map[string]int{}
	inFlight, total := 0, 0
	var movable []meta.Assignment // settled partitions on live owners, in a stable order
	names := make([]string, 0, len(as))
	for name := range as {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, a := range as[name] {
			switch {
			case a.Owner == "" || !alive[a.Owner] || a.Replicated():
				continue
			case a.Target != "":
				inFlight++
				count[a.Target]++
			default:
				count[a.Owner]++
				movable = append(movable, a)
			}
			total++
		}
	}
	if inFlight >= MaxMovesInFlight {
		return nil
	}
	// Quotas: the fullest receivers keep the ⌈T/R⌉ slots.
	quota := map[string]int{}
	order := append([]string(nil), receivers...)
	sort.SliceStable(order, func(i, j int) bool { return count[order[i]] > count[order[j]] })
	base, extra := total/len(receivers), total%len(receivers)
	for i, id := range order {
		quota[id] = base
		if i < extra {
			quota[id]++
		}
	}
	var out []Move
	for _, a := range movable {
		if inFlight+len(out) >= MaxMovesInFlight {
			break
		}
		if count[a.Owner] <= quota[a.Owner] { // draining members have quota 0
			continue
		}
		to := destination(receivers, count, quota, avoidFor(a, topics, as))
		if to == "" {
			break // nobody below quota: balanced
		}
		out = append(out, Move{Topic: a.Topic, Partition: a.Partition, From: a.Owner, To: to})
		count[a.Owner]--
		count[to]++
	}
	return out
}

// destination picks the receiver furthest below its quota, preferring one
// that is not avoid; "" if none is below quota.
func destination(receivers []string, count, quota map[string]int, avoid string) string {
	best, bestGap := "", 0
	for _, pass := range []bool{true, false} {
		for _, id := range receivers {
			if pass && id == avoid {
				continue
			}
			if gap := quota[id] - count[id]; gap > bestGap {
				best, bestGap = id, gap
			}
		}
		if best != "" {
			return best
		}
	}
	return ""
}

// avoidFor is the node holding the linked copy of a's partition: the
// owner of the same partition of the topic's parent, or of its first
// child (the replica pattern keeps the two copies apart).
func avoidFor(a meta.Assignment, topics map[string]meta.Topic, as map[string][]meta.Assignment) string {
	t := topics[a.Topic]
	linked := t.Parent
	if linked == "" && len(t.Children) > 0 {
		linked = t.Children[0]
	}
	if other := as[linked]; a.Partition < len(other) {
		return other[a.Partition].Owner
	}
	return ""
}
