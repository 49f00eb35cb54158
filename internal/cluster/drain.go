package cluster

import (
	"context"
	"slices"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// Decommission of replicated partitions. A single copy leaves a draining
// node by a move (the planner); a replicated partition leaves it by its
// replica set changing instead, one step a controller tick, each decided
// again from the placement as it is (nothing is remembered between
// ticks, so a new controller carries on where the old one stopped):
//
//  1. add replacements: live, non-draining nodes not holding a copy, until
//     the copies off draining nodes number the replication factor; they
//     join out of sync (SetReplicas);
//  2. wait until every copy that stays, on a node not marked dead, is in
//     the in-sync set — the leader adds a replacement once it has caught
//     up — and those in sync are a majority of the copies that stay;
//  3. if a draining node leads, elect an in-sync copy that stays and was
//     heard from within FailoverAfter on its recorded disk (a planned
//     change: the old leader is alive, but an in-sync member holds every
//     acknowledged record, and the old leader acknowledges nothing more it
//     lacks: the new leader stops fetching, and the old one's in-sync set
//     can no longer change at its deposed epoch);
//  4. drop the draining nodes from the replicas (SetReplicas).
//
// The copy count never goes below the factor on a decommission's account
// (with no node to take a copy it waits), and never below a majority of
// in-sync copies (step 2, checked again where SetReplicas applies). Only
// with the most copies a placement may list (meta.MaxReplicationFactor)
// already listed does step 4 come before step 1: one copy fewer for a
// tick, the reconcile adds it back.

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
	drainNone   drainAct = iota // no copy on a draining node
	drainWait                   // not safe yet (why says what it waits for)
	drainAdd                    // SetReplicas(replicas): replacements join
	drainElect                  // ElectLeader(to): the leadership leaves a draining node
	drainRemove                 // SetReplicas(replicas): the draining copies leave
)

type drainStep struct {
	act      drainAct
	replicas []string // drainAdd, drainRemove
	to       string   // drainElect
	why      string   // drainWait
}

// planDrain decides the next drain step of one placed, replicated
// partition. want is its topic's replication factor; live are the nodes
// that may receive copies (Live); avoid the parent partition's copies;
// gone reports a member marked dead (it blocks nothing); heard one heard
// from within FailoverAfter (the only kind elected).
func planDrain(a meta.Assignment, want int, draining func(string) bool, live, avoid []string,
	gone, heard func(string) bool) drainStep {
	if !a.Replicated() || a.Owner == "" || a.Target != "" {
		return drainStep{act: drainNone}
	}
	var keep []string
	for _, id := range a.Replicas {
		if !draining(id) {
			keep = append(keep, id)
		}
	}
	if len(keep) == len(a.Replicas) {
		return drainStep{act: drainNone}
	}
	if len(keep) < want {
		if room := meta.MaxReplicationFactor - len(a.Replicas); room > 0 {
			grown := resize(a, keep, want, live, avoid)
			add := grown[len(keep):]
			if len(add) > room {
				add = add[:room]
			}
			if len(add) == 0 {
				return drainStep{act: drainWait, why: "no live node without a copy to take one"}
			}
			return drainStep{act: drainAdd, replicas: append(slices.Clone(a.Replicas), add...)}
		}
	}
	var inSync []string
	for _, id := range keep {
		switch {
		case slices.Contains(a.InSync, id):
			inSync = append(inSync, id)
		case !gone(id):
			return drainStep{act: drainWait, why: "a copy that stays is not in sync yet"}
		}
	}
	if len(inSync) < meta.Majority(len(keep)) {
		return drainStep{act: drainWait, why: "too few in-sync copies would stay"}
	}
	if draining(a.Owner) {
		for _, id := range inSync {
			if heard(id) {
				return drainStep{act: drainElect, to: id}
			}
		}
		return drainStep{act: drainWait, why: "no in-sync copy that stays was heard from, to lead"}
	}
	return drainStep{act: drainRemove, replicas: keep}
}

// drainReplicas runs the drain steps of every replicated partition with a
// copy on a draining member (controller tick). After an election it goes
// on with the same partition at once: the old leader leaves the replicas
// in the same tick, so the new one commits over the copies that stay.
func (n *Node) drainReplicas(ctx context.Context, live []string, now time.Time) {
	state := map[string]meta.Member{}
	for _, m := range n.Meta.Members() {
		state[m.ID] = m
	}
	draining := func(id string) bool { return state[id].Draining }
	gone := func(id string) bool { m, ok := state[id]; return !ok || m.State == meta.MemberDead }
	// As failover's: only a member whose latest heartbeat named its
	// recorded disk is elected (disks.go).
	heard := func(id string) bool {
		return !gone(id) && now.Sub(n.seen(id)) <= FailoverAfter && n.onRecordedDisk(state[id])
	}
	for _, t := range n.Meta.Topics() {
		if t.Remote != nil {
			continue
		}
		want := max(1, t.ReplicationFactor)
		var parent []meta.Assignment
		if t.Parent != "" {
			parent = n.Meta.Assignments(t.Parent)
		}
		for _, a := range n.Meta.Assignments(t.Name) {
			avoid := parentCopies(parent, a.Partition)
			for range 2 { // an election, then the removal
				step := planDrain(a, want, draining, live, avoid, gone, heard)
				if !n.applyDrain(ctx, a, step) || step.act != drainElect {
					break
				}
				as := n.Meta.Assignments(t.Name)
				if a.Partition >= len(as) {
					break
				}
				a = as[a.Partition]
			}
		}
	}
}

// applyDrain proposes one step; it reports whether the step was taken.
func (n *Node) applyDrain(ctx context.Context, a meta.Assignment, s drainStep) bool {
	var err error
	switch s.act {
	case drainNone:
		return false
	case drainWait:
		n.Log.Debug("decommission of a replicated partition waits", "topic", a.Topic, "partition", a.Partition,
			"replicas", a.Replicas, "in_sync", a.InSync, "why", s.why)
		return false
	case drainAdd, drainRemove:
		err = n.Meta.SetReplicas(ctx, a.Topic, a.Partition, a.LeaderEpoch, s.replicas, "")
	case drainElect:
		err = n.Meta.ElectLeader(ctx, a.Topic, a.Partition, a.LeaderEpoch, s.to)
	}
	if err != nil {
		n.Log.Warn("decommission of a replicated partition: step refused", "topic", a.Topic, "partition", a.Partition,
			"step", s.act.String(), "err", err)
		return false
	}
	if s.act == drainRemove {
		if n.copyLeft == nil {
			n.copyLeft = map[string]time.Time{}
		}
		for _, id := range a.Replicas {
			if !slices.Contains(s.replicas, id) {
				n.copyLeft[id] = n.clock().Now()
			}
		}
	}
	n.Log.Info("decommission of a replicated partition", "topic", a.Topic, "partition", a.Partition, "step", s.act.String(),
		"from", a.Replicas, "to", s.replicas, "leader", s.to, "epoch", a.LeaderEpoch)
	return true
}

func (d drainAct) String() string {
	return [...]string{"none", "wait", "add replacement", "move leadership", "remove draining copies"}[d]
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

// drainingCopy reports whether a replicated partition has a copy on a
// draining member: its replicas are drainReplicas', not the factor
// reconcile's (which would drop a replacement still catching up).
func drainingCopy(a meta.Assignment, members []meta.Member) bool {
	if !a.Replicated() {
		return false
	}
	for _, m := range members {
		if m.Draining && slices.Contains(a.Replicas, m.ID) {
			return true
		}
	}
	return false
}
