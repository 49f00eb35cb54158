package cluster

import (
	"hash/fnv"
	"sort"

	"github.com/narad-io/narad/internal/meta"
)

// Live returns the members that may receive partitions: alive and not
// draining, sorted by id so every node computes the same order.
func Live(members []meta.Member) []string {
	var ids []string
	for _, m := range members {
		if m.State != meta.MemberDead && !m.Draining {
			ids = append(ids, m.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// Assign places partitions [from, to) of topic, keeping rf copies of each
// (0 or 1: one), over the live members, round robin from a start derived
// from the topic name (so topics spread instead of all starting on the
// first node).
//
// For a child created together with its parent (parent != nil) partition p
// goes to a node other than the owner of parent partition p whenever two
// or more live nodes exist (the replica pattern: both copies of a record
// on different nodes). If parent partition p is not placed yet, p is left
// unplaced (Owner "") — deferred, never guessed; the controller places it
// once the parent's partition has an owner.
//
// With rf > 1 see replicate: the single-copy path below is untouched, so
// an rf 1 placement is byte for byte what it always was.
func Assign(topic string, from, to, rf int, live []string, parent []meta.Assignment) []meta.Assignment {
	if rf > 1 {
		return replicate(topic, from, to, rf, live, parent)
	}
	out := make([]meta.Assignment, 0, max(to-from, 0))
	if len(live) == 0 {
		for p := from; p < to; p++ {
			out = append(out, meta.Assignment{Topic: topic, Partition: p})
		}
		return out
	}
	start := startOf(topic, len(live))
	for p := from; p < to; p++ {
		owner := live[(start+p)%len(live)]
		if parent != nil {
			owner = avoid(live, (start+p)%len(live), parentOwner(parent, p))
		}
		out = append(out, meta.Assignment{Topic: topic, Partition: p, Owner: owner})
	}
	return out
}

// startOf is where topic's round robin starts among n live members.
func startOf(topic string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(topic))
	return int(h.Sum32() % uint32(n))
}

// parentOwner is the owner of parent partition p: "" when unplaced, and
// "-" when the parent has no such partition (nothing to avoid).
func parentOwner(parent []meta.Assignment, p int) string {
	if p >= len(parent) {
		return "-"
	}
	return parent[p].Owner
}

// avoid returns the node at index i of live, moved forward past the node
// to avoid; "" (deferred) when the node to avoid is not known yet.
func avoid(live []string, i int, not string) string {
	switch {
	case not == "":
		return ""
	case len(live) < 2 || live[i] != not:
		return live[i]
	}
	return live[(i+1)%len(live)]
}

// Placement is the controller's placement for the broker (its Placer):
// Assign over this replica's live members, with the parent's assignments
// for a child created together with its parent.
type Placement struct{ Meta *meta.Store }

// Place decides the replicas of partitions [from, to) of topic, rf copies
// each; parent is the parent's name for a child created with it, else "".
func (pl Placement) Place(topic string, from, to, rf int, parent string) []meta.Assignment {
	var parentAs []meta.Assignment
	if parent != "" {
		parentAs = pl.Meta.Assignments(parent)
	}
	return Assign(topic, from, to, rf, Live(pl.Meta.Members()), parentAs)
}

// LiveCount is how many members may receive partitions now: the most
// copies a topic created now can have.
func (pl Placement) LiveCount() int { return len(Live(pl.Meta.Members())) }
