package cluster

import (
	"context"
	"slices"

	"github.com/narad-io/narad/internal/meta"
)

// LeaderMovesPerTick bounds the elections one controller tick makes to
// spread leadership: each one makes its partition's produce wait while
// the new leader records its epoch start (a moment, not a failover).
const LeaderMovesPerTick = 1

// leaderMove is one planned election for balance: To leads the partition
// at Epoch+1 instead of From.
type leaderMove struct {
	Topic     string
	Partition int
	Epoch     uint64
	From, To  string
}

// planLeaders returns the elections that spread leadership over the
// receivers (v.live), counting every replicated partition led from a
// receiver: a healthy partition (every copy in sync, on a receiver heard
// from) led from a receiver S is given to another of its copies on D only
// when S leads at least two partitions more than D. Each election then
// strictly lowers the sum of squared leader counts, so they end and never
// flap back (the reverse would need D to lead two more than S). From the
// receiver leading most, the copy leading fewest is picked, then topic,
// partition and replica order; at most LeaderMovesPerTick. Like Kafka's
// preferred-leader election it moves leadership between in-sync copies
// only, and the election drops the old leader from the in-sync set until
// it catches up again, so a partition is not re-elected before then.
// A partition of two copies is never re-elected for balance: the old
// leader's leaving the in-sync set would leave one, under a majority.
// Deterministic: the same state plans the same elections on any node.
func planLeaders(as map[string][]meta.Assignment, v copyView) []leaderMove {
	count := map[string]int{}
	var cands []meta.Assignment
	for _, name := range sortedNames(as) {
		for _, a := range as[name] {
			if !a.Replicated() || a.Owner == "" || !slices.Contains(v.live, a.Owner) {
				continue
			}
			count[a.Owner]++
			// The election drops the old leader from the in-sync set:
			// only where the rest still make a majority (not at two
			// copies, whose commits would stall until it caught up).
			if healthy(a, v) && len(a.InSync)-1 >= meta.Majority(len(a.Replicas)) {
				cands = append(cands, a)
			}
		}
	}
	used := make([]bool, len(cands))
	var out []leaderMove
	for len(out) < LeaderMovesPerTick {
		srcs := slices.Clone(v.live)
		slices.SortStableFunc(srcs, func(x, y string) int { return count[y] - count[x] })
		best := -1
		var from, to string
		for _, src := range srcs {
			for i, a := range cands {
				if used[i] || a.Owner != src {
					continue
				}
				for _, dst := range a.Replicas {
					if dst != src && count[src]-count[dst] >= 2 && (best < 0 || count[dst] < count[to]) {
						best, from, to = i, src, dst
					}
				}
			}
			if best >= 0 {
				break
			}
		}
		if best < 0 {
			break
		}
		used[best] = true
		count[from]--
		count[to]++
		a := cands[best]
		out = append(out, leaderMove{Topic: a.Topic, Partition: a.Partition, Epoch: a.LeaderEpoch, From: from, To: to})
	}
	return out
}

// balanceLeaders makes the elections planLeaders plans.
func (w *copyWork) balanceLeaders(ctx context.Context) {
	_, as := w.placement()
	for _, m := range planLeaders(as, w.copyView) {
		if err := w.st.ElectLeader(ctx, m.Topic, m.Partition, m.Epoch, m.To); err != nil {
			w.log.Warn("spreading leadership", "topic", m.Topic, "partition", m.Partition, "to", m.To, "err", err)
			continue
		}
		w.elected(m.From, m.To)
		w.log.Info("partition leadership spread: an in-sync copy on a node leading fewer takes over", "topic", m.Topic,
			"partition", m.Partition, "from", m.From, "to", m.To, "epoch", m.Epoch+1)
	}
}
