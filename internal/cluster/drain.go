package cluster

import (
	"context"
	"slices"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// Copies leaving replicated partitions: off a draining member (a
// decommission), or the copy a rebalance or a heal marked leaving
// (meta.Assignment.Leaving, rebalance.go, heal.go). A single copy leaves a
// draining node by a move (the planner); a replicated partition's copy
// leaves by its replica set changing instead, one step a controller tick,
// each decided again from the placement as it is (nothing is remembered
// between ticks, so a new controller carries on where the old one
// stopped):
//
//  1. add replacements: live, non-draining nodes not holding a copy, until
//     the copies that stay number the replication factor; they join out
//     of sync (SetReplicas, naming the marked copy while it stays);
//  2. wait until every copy that stays, on a node neither marked dead nor
//     lost (silent past Node.HealAfter, heal.go), is in the in-sync set —
//     the leader adds a replacement once it has caught up — and those in
//     sync are a majority of the copies that stay;
//  3. if a leaving copy leads, elect the in-sync copy that stays, heard
//     from within FailoverAfter on its recorded disk, that leads fewest
//     partitions (a planned change: the old leader is alive, but an
//     in-sync member holds every acknowledged record, and the old leader
//     acknowledges nothing more it lacks: the new leader stops fetching,
//     and the old one's in-sync set can no longer change at its deposed
//     epoch);
//  4. drop the leaving copies from the replicas (SetReplicas; the mark
//     goes with its copy).
//
// The copy count never goes below the factor on this account (with no
// node to take a copy it waits), and never below a majority of in-sync
// copies (step 2, checked again where SetReplicas applies). Only with the
// most copies a placement may list (meta.MaxReplicationFactor) already
// listed does a decommission's step 4 come before step 1: one copy fewer
// for a tick, the reconcile adds it back.
//
// A rebalance is optional, a decommission and a heal are not: a marked
// copy whose node is neither draining nor lost is called off (the mark
// cleared, the replicas left as they are, the reconcile then drops the
// surplus copy, out-of-sync ones first) rather than weakening the partition or waiting on what may
// not come: when a copy that stays is out of sync on a dead node (the
// replacement died), when the copies that stay are fewer than the factor
// and no copy can be added, or when the marked copy leads and no in-sync
// copy that stays was heard from to take over. A heal is called off only
// when the partition lists the most copies a placement may, so that no
// replacement can join before its copy leaves.

// RetireGrace is how long a draining member stays a Raft voter after the
// controller removed its last replicated copy: its move shed (every 10 s)
// deletes the copy on the leader's read index, which a node no longer
// among the voters cannot get (its metastore stops hearing the leader).
// A copy left behind anyway (a controller change forgets the times) is
// harmless: the node owns nothing and serves nothing of it.
const RetireGrace = 15 * time.Second

// drainAct is what one drain step does.
type drainAct int

const (
	drainNone   drainAct = iota // no copy leaving
	drainWait                   // not safe yet (why says what it waits for)
	drainAdd                    // SetReplicas(replicas): replacements join
	drainElect                  // ElectLeader(to): the leadership leaves a leaving copy
	drainRemove                 // SetReplicas(replicas): the leaving copies leave
	drainCancel                 // SetReplicas(the same replicas, unmarked): a rebalance's move called off
)

type drainStep struct {
	act      drainAct
	replicas []string // drainAdd, drainRemove
	to       string   // drainElect
	why      string   // drainWait, drainCancel
}

// planDrain decides the next step of one placed, replicated partition
// with a copy leaving (on a draining member, or marked). want is its
// topic's replication factor; avoid the parent partition's copies.
func planDrain(a meta.Assignment, want int, avoid []string, v copyView) drainStep {
	if !a.Replicated() || a.Owner == "" || a.Target != "" {
		return drainStep{act: drainNone}
	}
	leaves := func(id string) bool { return v.draining(id) || id == a.Leaving }
	var keep []string
	for _, id := range a.Replicas {
		if !leaves(id) {
			keep = append(keep, id)
		}
	}
	if len(keep) == len(a.Replicas) {
		return drainStep{act: drainNone}
	}
	// A rebalance's move; a heal's (the marked copy's node is lost) is
	// not: it goes on, as a decommission does — but for a replacement
	// that cannot join first (at the most copies a placement lists).
	marked := a.Leaving != "" && !v.draining(a.Leaving)
	optional := marked && !v.isLost(a.Leaving)
	if len(keep) < want {
		room := meta.MaxReplicationFactor - len(a.Replicas)
		var add []string
		if room > 0 {
			// Grown from every listed copy: a marked one is live, and
			// is no replacement for itself.
			n := len(a.Replicas)
			add = resize(a, a.Replicas, n+want-len(keep), v.live, avoid)[n:]
			add = add[:min(len(add), room)]
		}
		switch {
		case len(add) > 0:
			return drainStep{act: drainAdd, replicas: append(slices.Clone(a.Replicas), add...)}
		case optional || (marked && room <= 0):
			return drainStep{act: drainCancel, why: "fewer copies than the factor would stay, and none can be added"}
		case room > 0:
			return drainStep{act: drainWait, why: "no live node without a copy to take one"}
		}
	}
	var inSync []string
	for _, id := range keep {
		switch {
		case slices.Contains(a.InSync, id):
			inSync = append(inSync, id)
		case optional && v.down(id):
			return drainStep{act: drainCancel, why: "a copy that stays is out of sync on a dead node"}
		case !v.down(id):
			return drainStep{act: drainWait, why: "a copy that stays is not in sync yet"}
		}
	}
	if len(inSync) < meta.Majority(len(keep)) {
		return drainStep{act: drainWait, why: "too few in-sync copies would stay"}
	}
	if leaves(a.Owner) {
		to := ""
		for _, id := range inSync {
			if v.heard(id) && (to == "" || load(v, id) < load(v, to)) {
				to = id
			}
		}
		switch {
		case to == "" && optional:
			return drainStep{act: drainCancel, why: "no in-sync copy that stays was heard from, to lead"}
		case to == "":
			return drainStep{act: drainWait, why: "no in-sync copy that stays was heard from, to lead"}
		}
		return drainStep{act: drainElect, to: to}
	}
	return drainStep{act: drainRemove, replicas: keep}
}

func load(v copyView, id string) int {
	if v.leads == nil {
		return 0
	}
	return v.leads(id)
}

// moveCopies runs the steps of every replicated partition with a copy
// leaving. After an election it goes on with the same partition at once:
// the old leader leaves the replicas in the same tick, so the new one
// commits over the copies that stay.
func (w *copyWork) moveCopies(ctx context.Context) {
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
			avoid := parentCopies(parent, a.Partition)
			for range 2 { // an election, then the removal
				step := planDrain(a, want, avoid, w.copyView)
				if !w.applyDrain(ctx, a, step) || step.act != drainElect {
					break
				}
				as := w.st.Assignments(t.Name)
				if a.Partition >= len(as) {
					break
				}
				a = as[a.Partition]
			}
		}
	}
}

// applyDrain proposes one step; it reports whether the step was taken.
func (w *copyWork) applyDrain(ctx context.Context, a meta.Assignment, s drainStep) bool {
	var err error
	switch s.act {
	case drainNone:
		return false
	case drainWait:
		w.log.Debug("a replicated partition's leaving copy waits", "topic", a.Topic, "partition", a.Partition,
			"replicas", a.Replicas, "in_sync", a.InSync, "leaving", a.Leaving, "why", s.why)
		return false
	case drainAdd, drainRemove:
		err = w.st.SetReplicas(ctx, a.Topic, a.Partition, a.LeaderEpoch, s.replicas, markKept(a, s.replicas))
	case drainCancel:
		err = w.st.SetReplicas(ctx, a.Topic, a.Partition, a.LeaderEpoch, a.Replicas, "")
	case drainElect:
		err = w.st.ElectLeader(ctx, a.Topic, a.Partition, a.LeaderEpoch, s.to)
	}
	if err != nil {
		w.log.Warn("a replicated partition's leaving copy: step refused", "topic", a.Topic, "partition", a.Partition,
			"step", s.act.String(), "err", err)
		return false
	}
	switch s.act {
	case drainElect:
		w.elected(a.Owner, s.to)
	case drainRemove:
		for _, id := range a.Replicas {
			if !slices.Contains(s.replicas, id) && w.removed != nil {
				w.removed(id)
			}
		}
	}
	w.log.Info("a replicated partition's copy leaves", "topic", a.Topic, "partition", a.Partition, "step", s.act.String(),
		"from", a.Replicas, "to", s.replicas, "leaving", a.Leaving, "leader", s.to, "epoch", a.LeaderEpoch, "why", s.why)
	return true
}

// markKept is the leaving mark a change to replicas names: a's, while its
// copy stays (meta's rule: a change that keeps it names it).
func markKept(a meta.Assignment, replicas []string) string {
	if slices.Contains(replicas, a.Leaving) {
		return a.Leaving
	}
	return ""
}

func (d drainAct) String() string {
	return [...]string{"none", "wait", "add replacement", "move leadership", "remove leaving copies", "call the move off"}[d]
}

// parentCopies is the nodes holding parent partition p's copies (its
// replicas, or its owner): a child's new copies keep off them.
func parentCopies(parent []meta.Assignment, p int) []string {
	if p >= len(parent) {
		return nil
	}
	if len(parent[p].Replicas) > 0 {
		return parent[p].Replicas
	}
	if parent[p].Owner != "" {
		return []string{parent[p].Owner}
	}
	return nil
}

// leavingCopy reports whether a replicated partition has a copy leaving
// (marked, or on a draining member): its replicas are moveCopies', not
// the factor reconcile's (which would drop a replacement still catching
// up).
func leavingCopy(a meta.Assignment, draining func(string) bool) bool {
	return a.Replicated() && (a.Leaving != "" || slices.ContainsFunc(a.Replicas, draining))
}
