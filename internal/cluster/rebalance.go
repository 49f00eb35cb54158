package cluster

import (
	"context"
	"slices"
	"sort"

	"github.com/narad-io/narad/internal/meta"
)

// MaxReplicaMovesInFlight bounds the replicated partitions with a copy
// marked leaving at once: each is a new copy fetching a whole partition
// log from its leader, beside the produce traffic.
const MaxReplicaMovesInFlight = 4

// replicaMove is one planned rebalance move: From's copy of a partition
// leaves, To's joins first. Replicas is the partition's replicas with To
// added, at Epoch: the SetReplicas that starts it, marking From.
type replicaMove struct {
	Topic     string
	Partition int
	Epoch     uint64
	From, To  string
	Replicas  []string
}

// planReplicaMoves returns the rebalance moves to start: copies of
// replicated partitions from the fullest receivers (v.live) to the
// emptiest, counting every copy on a receiver but a marked one (a move
// in flight counts at its destination), until no two receivers differ by
// two or more copies that a move could even out.
//
// A move goes from a receiver S to a receiver D only when S holds at
// least two copies more than D, so each one strictly lowers the sum of
// squared counts: the moves end, and never undo one another. Moved are
// only healthy partitions (every copy in sync, on a receiver heard from)
// holding exactly their factor and fewer than meta.MaxReplicationFactor
// copies (the replacement joins before the copy leaves), to a destination
// heard from. Among the moves off the fullest receiver that have a
// destination, a follower's copy is preferred to the leader's (no
// election), a destination off the parent partition's copies to one on
// them (anti-affinity, a preference: balance wins), then the emptiest
// destination, then topic, partition and node order. At most
// MaxReplicaMovesInFlight partitions are marked at once. Deterministic:
// the same state plans the same moves on any node.
func planReplicaMoves(topics []meta.Topic, as map[string][]meta.Assignment, v copyView) []replicaMove {
	if len(v.live) < 2 {
		return nil
	}
	factor, parentOf := topicShapes(topics)
	type candidate struct {
		a     meta.Assignment
		avoid []string
	}
	count, inFlight := copyCounts(as, v.live)
	var cands []candidate
	for _, name := range sortedNames(as) {
		for _, a := range as[name] {
			if healthy(a, v) && len(a.Replicas) == factor[name] && len(a.Replicas) < meta.MaxReplicationFactor {
				cands = append(cands, candidate{a: a, avoid: parentCopies(as[parentOf[name]], a.Partition)})
			}
		}
	}
	used := make([]bool, len(cands))
	var out []replicaMove
	for inFlight+len(out) < MaxReplicaMovesInFlight {
		srcs := slices.Clone(v.live)
		sort.SliceStable(srcs, func(i, j int) bool { return count[srcs[i]] > count[srcs[j]] })
		best, bestKey := -1, [3]int{}
		var from, to string
		for _, src := range srcs {
			for i, c := range cands {
				if used[i] || !slices.Contains(c.a.Replicas, src) {
					continue
				}
				for _, dst := range v.live {
					if count[src]-count[dst] < 2 || slices.Contains(c.a.Replicas, dst) || !v.heard(dst) {
						continue
					}
					key := [3]int{b2i(c.a.Owner == src), b2i(slices.Contains(c.avoid, dst)), count[dst]}
					if best < 0 || slices.Compare(key[:], bestKey[:]) < 0 {
						best, bestKey, from, to = i, key, src, dst
					}
				}
			}
			if best >= 0 {
				break
			}
		}
		if best < 0 {
			break // as even as moves can make it
		}
		used[best] = true
		count[from]--
		count[to]++
		a := cands[best].a
		out = append(out, replicaMove{Topic: a.Topic, Partition: a.Partition, Epoch: a.LeaderEpoch, From: from, To: to,
			Replicas: append(slices.Clone(a.Replicas), to)})
	}
	return out
}

// copyCounts is how many copies of placed replicated partitions each
// receiver holds, a marked copy not counted (a move in flight counts at
// its destination), and how many partitions have a copy marked.
func copyCounts(as map[string][]meta.Assignment, receivers []string) (count map[string]int, marked int) {
	count = map[string]int{}
	for _, list := range as {
		for _, a := range list {
			if !a.Replicated() || a.Owner == "" {
				continue
			}
			if a.Leaving != "" {
				marked++
			}
			for _, id := range a.Replicas {
				if id != a.Leaving && slices.Contains(receivers, id) {
					count[id]++
				}
			}
		}
	}
	return count, marked
}

// topicShapes is each topic's replication factor (at least 1) and parent.
func topicShapes(topics []meta.Topic) (factor map[string]int, parentOf map[string]string) {
	factor, parentOf = map[string]int{}, map[string]string{}
	for _, t := range topics {
		factor[t.Name], parentOf[t.Name] = max(1, t.ReplicationFactor), t.Parent
	}
	return factor, parentOf
}

// rebalance starts the moves planReplicaMoves plans; moveCopies
// (drain.go) carries each on from the next tick.
func (w *copyWork) rebalance(ctx context.Context) {
	topics, as := w.placement()
	for _, m := range planReplicaMoves(topics, as, w.copyView) {
		if w.startMove(ctx, m, "rebalance") {
			w.log.Info("replica move started: a replacement joins before the copy leaves", "topic", m.Topic, "partition", m.Partition,
				"from", m.From, "to", m.To)
		}
	}
}

// startMove proposes a move's first step: its replacement added and the
// copy that leaves marked, in one SetReplicas. It reports whether the
// metastore took it.
func (w *copyWork) startMove(ctx context.Context, m replicaMove, why string) bool {
	if err := w.st.SetReplicas(ctx, m.Topic, m.Partition, m.Epoch, m.Replicas, m.From); err != nil {
		w.log.Warn("starting a replica move", "why", why, "topic", m.Topic, "partition", m.Partition, "from", m.From, "to", m.To, "err", err)
		return false
	}
	return true
}

// placement is every local topic and its assignments.
func (w *copyWork) placement() ([]meta.Topic, map[string][]meta.Assignment) {
	var topics []meta.Topic
	as := map[string][]meta.Assignment{}
	for _, t := range w.st.Topics() {
		if t.Remote != nil {
			continue
		}
		topics = append(topics, t)
		as[t.Name] = w.st.Assignments(t.Name)
	}
	return topics, as
}

func sortedNames(as map[string][]meta.Assignment) []string {
	names := make([]string, 0, len(as))
	for name := range as {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
