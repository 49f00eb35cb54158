package cluster

import (
	"context"
	"slices"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// Replicated partitions on the controller: electing a new leader when one
// falls silent, and bringing each partition's replicas to its topic's
// replication factor. Every proposal is checked where it applies (the
// epoch it was decided at), so a decision from a stale view changes
// nothing.

// failover elects, for each replicated partition whose leader is dead,
// silent for more than FailoverAfter, or outside the in-sync set (its
// disk was replaced, meta.ReplaceDisk), the first in-sync replica heard
// from within FailoverAfter whose latest heartbeat announced its recorded
// disk, one that is not leaving first. Silence counts from the later of the last heartbeat and this
// leader's first tick: a new controller first hears everyone out.
// A leader heard but cut off from a majority of its copies (cutOff) gives
// way the same, only to an in-sync copy among those that reported it.
func (n *Node) failover(ctx context.Context, now time.Time) {
	state := map[string]meta.Member{}
	for _, m := range n.Meta.Members() {
		state[m.ID] = m
	}
	heard := n.heardFrom(state, now)
	for _, t := range n.Meta.Topics() {
		for _, a := range n.Meta.Assignments(t.Name) {
			if !a.Replicated() || a.Owner == "" {
				continue
			}
			since := n.seen(a.Owner)
			if n.leaderSince.After(since) {
				since = n.leaderSince
			}
			lost := !slices.Contains(a.InSync, a.Owner)
			// At FailoverAfter, not a turn later: a new controller's turns
			// fall on its leaderSince plus whole turns.
			var cut []string // the copies that cannot reach a leader still heard
			if !lost && state[a.Owner].State != meta.MemberDead && now.Sub(since) < n.timings().FailoverAfter {
				if cut = n.cutOff(a, now); cut == nil {
					continue
				}
			}
			// A copy that stays is preferred to one leaving (drain.go),
			// which would have to hand the leadership over again.
			to := ""
			for _, stays := range []bool{true, false} {
				for _, id := range a.InSync {
					// Of a leader cut off, a copy that reported it: a copy
					// still fetching from it is on its side of the cut.
					if to == "" && id != a.Owner && heard(id) && (id != a.Leaving && !state[id].Draining) == stays &&
						(cut == nil || slices.Contains(cut, id)) {
						to = id
					}
				}
			}
			if to == "" {
				n.Log.Debug("partition leader silent, no in-sync replica to elect", "topic", a.Topic, "partition", a.Partition,
					"leader", a.Owner, "in_sync", a.InSync)
				continue
			}
			if err := n.Meta.ElectLeader(ctx, a.Topic, a.Partition, a.LeaderEpoch, to); err != nil {
				n.Log.Warn("electing a partition leader", "topic", a.Topic, "partition", a.Partition, "to", to, "err", err)
				continue
			}
			n.noteHandOff(partKey{a.Topic, a.Partition}, now)
			if cut != nil {
				if n.CutOffElections != nil {
					n.CutOffElections.Inc()
				}
				n.Log.Warn("partition leader elected: a majority of its copies cannot reach the old one", "topic", a.Topic,
					"partition", a.Partition, "from", a.Owner, "to", to, "epoch", a.LeaderEpoch+1, "reported_by", cut)
				continue
			}
			n.Log.Warn("partition leader elected: the old one fell silent or lost its disk", "topic", a.Topic, "partition", a.Partition,
				"from", a.Owner, "to", to, "epoch", a.LeaderEpoch+1, "silent_ms", now.Sub(since).Milliseconds(), "disk_lost", lost)
		}
	}
}

// reconcile brings each placed partition's replica count to its topic's
// replication factor (SetReplicas): new members are live nodes, kept off
// the parent partition's copies where possible, and join out of sync;
// members leave out-of-sync first, and the leader never. A partition with
// a copy leaving — marked by a rebalance, or on a draining member — is
// left to moveCopies: its surplus copy is a replacement catching up. A
// single-copy topic whose partitions have one copy is never touched.
func (w *copyWork) reconcile(ctx context.Context) {
	for _, t := range w.st.Topics() {
		if t.Remote != nil {
			continue
		}
		want := max(1, t.ReplicationFactor)
		var parent []meta.Assignment
		if t.Parent != "" {
			parent = w.st.Assignments(t.Parent)
		}
		for _, a := range w.st.Assignments(t.Name) {
			if a.Owner == "" || a.Target != "" || leavingCopy(a, w.draining) {
				continue // a copy leaving changes these replicas (drain.go)
			}
			cur := a.Replicas
			if len(cur) == 0 {
				cur = []string{a.Owner}
			}
			if len(cur) == want {
				continue
			}
			next := resize(a, cur, want, w.live, parentCopies(parent, a.Partition))
			if slices.Equal(next, cur) {
				continue // no live node to add
			}
			if err := w.st.SetReplicas(ctx, a.Topic, a.Partition, a.LeaderEpoch, next, ""); err != nil {
				w.log.Debug("changing a partition's replicas", "topic", a.Topic, "partition", a.Partition, "to", next, "err", err)
				continue
			}
			w.log.Info("partition replicas changed", "topic", a.Topic, "partition", a.Partition, "from", cur, "to", next)
		}
	}
}

// resize is cur grown or shrunk towards want members. Growth takes live
// nodes in rotation after the leader, those not in avoid first; shrinking
// drops followers from the end, out-of-sync ones first, never a.Owner.
func resize(a meta.Assignment, cur []string, want int, live, avoid []string) []string {
	next := slices.Clone(cur)
	if len(next) < want {
		i := max(slices.Index(live, a.Owner), 0)
		for _, pass := range []bool{false, true} {
			for k := 0; k < len(live) && len(next) < want; k++ {
				id := live[(i+k)%len(live)]
				if slices.Contains(avoid, id) == pass && !slices.Contains(next, id) {
					next = append(next, id)
				}
			}
		}
		return next
	}
	inSync := a.InSync
	if len(a.Replicas) == 0 {
		inSync = []string{a.Owner}
	}
	for _, dropInSync := range []bool{false, true} {
		for k := len(next) - 1; k >= 0 && len(next) > want; k-- {
			if id := next[k]; id != a.Owner && slices.Contains(inSync, id) == dropInSync {
				next = slices.Delete(next, k, k+1)
			}
		}
	}
	return next
}
