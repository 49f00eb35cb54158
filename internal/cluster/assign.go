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

// Assign places partitions [from, to) of topic over the live members,
// round robin from a start derived from the topic name (so topics spread
// instead of all starting on the first node).
//
// For a child created together with its parent (parent != nil) partition p
// goes to a node other than the owner of parent partition p whenever two
// or more live nodes exist (the replica pattern: both copies of a record
// on different nodes). If parent partition p is not placed yet, p is left
// unplaced (Owner "") — deferred, never guessed; the controller places it
// once the parent's partition has an owner.
func Assign(topic string, from, to int, live []string, parent []meta.Assignment) []meta.Assignment {
	out := make([]meta.Assignment, 0, max(to-from, 0))
	if len(live) == 0 {
		for p := from; p < to; p++ {
			out = append(out, meta.Assignment{Topic: topic, Partition: p})
		}
		return out
	}
	h := fnv.New32a()
	h.Write([]byte(topic))
	start := int(h.Sum32() % uint32(len(live)))
	for p := from; p < to; p++ {
		owner := live[(start+p)%len(live)]
		if parent != nil {
			owner = avoid(live, (start+p)%len(live), parentOwner(parent, p))
		}
		out = append(out, meta.Assignment{Topic: topic, Partition: p, Owner: owner})
	}
	return out
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

// Place decides the owners of partitions [from, to) of topic; parent is
// the parent's name for a child created with it, else "".
func (pl Placement) Place(topic string, from, to int, parent string) []meta.Assignment {
	var parentAs []meta.Assignment
	if parent != "" {
		parentAs = pl.Meta.Assignments(parent)
	}
	return Assign(topic, from, to, Live(pl.Meta.Members()), parentAs)
}
