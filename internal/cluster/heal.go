package cluster

import (
	"context"
	"slices"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// Healing: a replicated partition whose copy sits on a node the
// controller has not heard from for longer than Node.HealAfter (the
// replication.heal_after_ms setting; 0 turns it off) gets that copy
// re-created on a live node, by the steps a rebalance moves a copy with
// (drain.go): the replacement is added and the lost copy marked leaving
// (meta.Assignment.Leaving) in one SetReplicas, the replacement catches
// up and joins the in-sync set, then the lost copy is removed. A node
// that comes back afterwards is no longer among the replicas and drops
// its copy (package move, shed.go).
//
// Silence is counted as failover counts it: from the later of the last
// heartbeat this controller heard and its own first turn as leader. A new
// controller knows nothing of the silence before it took over, so it
// heals no copy before HealAfter of its own, however long the node was
// silent before: a copy is re-created late, never early.
//
// A heal starts only on a partition the other steps leave alone: placed,
// not moving, no copy leaving (marked, or on a draining member: the
// decommission moves that one), exactly its factor of copies and fewer
// than meta.MaxReplicationFactor (the replacement joins before the copy
// leaves), its leader heard from (a lost leader is failover's first), the
// lost copy a follower. One lost copy a partition at a time; heals and
// rebalance moves together mark at most MaxReplicaMovesInFlight
// partitions, heals first.

// lostFor is the copy view's lost: silent for longer than after, counted
// from no earlier than this controller's first turn; never with after 0.
func (n *Node) lostFor(after time.Duration, now time.Time) func(string) bool {
	return func(id string) bool {
		if after <= 0 {
			return false
		}
		since := n.seen(id)
		if n.leaderSince.After(since) {
			since = n.leaderSince
		}
		return now.Sub(since) > after
	}
}

// isLost reports whether id's copies are to be re-created elsewhere (a
// view built without lost heals nothing).
func (v copyView) isLost(id string) bool { return v.lost != nil && v.lost(id) }

// down reports whether a copy on id is not waited for: its node is marked
// dead, unknown, or lost.
func (v copyView) down(id string) bool { return v.gone(id) || v.isLost(id) }

// lostCopy is the copy of a that a heal moves off, or "" when a is not
// one to heal (see above).
func lostCopy(a meta.Assignment, want int, v copyView) string {
	if !a.Replicated() || a.Owner == "" || a.Target != "" || leavingCopy(a, v.draining) ||
		len(a.Replicas) != want || want >= meta.MaxReplicationFactor || !v.heard(a.Owner) || v.isLost(a.Owner) {
		return ""
	}
	for _, id := range a.Replicas {
		if v.isLost(id) { // a follower: a lost leader returned above
			return id
		}
	}
	return ""
}

// planHeals returns the heals to start: for each partition with a lost
// copy (lostCopy), in topic and partition order, a replacement on a
// receiver (v.live) heard from and not holding a copy — off the parent
// partition's copies if possible, then the one holding fewest copies
// (counted as planReplicaMoves counts them, each planned heal included),
// then node order — while fewer than MaxReplicaMovesInFlight partitions
// are marked. A partition with no such receiver waits.
func planHeals(topics []meta.Topic, as map[string][]meta.Assignment, v copyView) []replicaMove {
	factor, parentOf := topicShapes(topics)
	count, inFlight := copyCounts(as, v.live)
	var out []replicaMove
	for _, name := range sortedNames(as) {
		for _, a := range as[name] {
			if inFlight+len(out) >= MaxReplicaMovesInFlight {
				return out
			}
			from := lostCopy(a, factor[name], v)
			if from == "" {
				continue
			}
			avoid := parentCopies(as[parentOf[name]], a.Partition)
			to, toKey := "", [2]int{}
			for _, id := range v.live {
				if slices.Contains(a.Replicas, id) || !v.heard(id) || v.isLost(id) {
					continue
				}
				key := [2]int{b2i(slices.Contains(avoid, id)), count[id]}
				if to == "" || slices.Compare(key[:], toKey[:]) < 0 {
					to, toKey = id, key
				}
			}
			if to == "" {
				continue
			}
			count[to]++
			out = append(out, replicaMove{Topic: a.Topic, Partition: a.Partition, Epoch: a.LeaderEpoch, From: from, To: to,
				Replicas: append(slices.Clone(a.Replicas), to)})
		}
	}
	return out
}

// heal starts the heals planHeals plans; moveCopies (drain.go) carries
// each on from the next tick, as it does a rebalance move.
func (w *copyWork) heal(ctx context.Context) {
	topics, as := w.placement()
	for _, m := range planHeals(topics, as, w.copyView) {
		if !w.startMove(ctx, m, "heal") {
			continue
		}
		if w.healed != nil {
			w.healed()
		}
		w.log.Warn("re-creating a copy on a node silent past heal_after: a replacement joins before the lost copy leaves",
			"topic", m.Topic, "partition", m.Partition, "lost", m.From, "to", m.To)
	}
}
