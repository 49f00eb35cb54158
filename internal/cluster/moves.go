package cluster

import (
	"context"
	"slices"

	"github.com/narad-io/narad/internal/meta"
)

// MinVoters is the fewest Raft voters decommission leaves.
const MinVoters = 3

// planMoves is the controller's planner tick, after control's barrier
// (the leader's applied state is current): cancel moves that can no
// longer finish, then set the targets of the moves Plan wants.
func (n *Node) planMoves(ctx context.Context) {
	members := n.Meta.Members()
	state := map[string]meta.Member{}
	for _, m := range members {
		state[m.ID] = m
	}
	topics := map[string]meta.Topic{}
	as := map[string][]meta.Assignment{}
	for _, t := range n.Meta.Topics() {
		topics[t.Name] = t
		as[t.Name] = n.Meta.Assignments(t.Name)
	}
	for _, list := range as {
		for _, a := range list {
			if a.Target == "" {
				continue
			}
			src, dst := state[a.Owner], state[a.Target]
			// A dead or draining destination, or a dead source (a forced
			// promotion is not built: see docs/choices.md), ends the move; the
			// source keeps serving and the planner may pick again.
			if dst.State == meta.MemberDead || dst.Draining || dst.ID == "" || src.State == meta.MemberDead {
				if err := n.Meta.SetTarget(ctx, a.Topic, a.Partition, a.Owner, ""); err == nil {
					n.Log.Warn("move cancelled", "topic", a.Topic, "partition", a.Partition, "from", a.Owner, "to", a.Target)
				}
			}
		}
	}
	for _, m := range Plan(members, topics, as) {
		if err := n.Meta.SetTarget(ctx, m.Topic, m.Partition, m.From, m.To); err != nil {
			n.Log.Warn("planning a move", "topic", m.Topic, "partition", m.Partition, "err", err)
			continue
		}
		n.Log.Info("move planned", "topic", m.Topic, "partition", m.Partition, "from", m.From, "to", m.To)
	}
}

// retire removes decommissioned members from the Raft voters once they
// own nothing, hold no replicated copy (and RetireGrace passed since the
// last was removed) and nothing moves to them — never below MinVoters; a leader
// that is itself being retired hands leadership over first.
func (n *Node) retire(ctx context.Context) {
	servers, err := n.Meta.Servers()
	if err != nil {
		return
	}
	voter := map[string]bool{}
	for _, s := range servers {
		voter[s.ID] = true
	}
	for _, m := range n.Meta.Members() {
		if !m.Draining || !voter[m.ID] || len(voter) <= MinVoters || n.holds(m.ID) {
			continue
		}
		if left, ok := n.copyLeft[m.ID]; ok && n.clock().Now().Sub(left) < RetireGrace {
			continue // its copies are being deleted while it can still ask the leader
		}
		if m.ID == n.Self.ID {
			n.Log.Info("decommissioned and empty: handing leadership over before leaving the voters")
			n.Meta.TransferLeadership()
			return
		}
		if err := n.Meta.RemoveServer(ctx, m.ID); err != nil {
			n.Log.Warn("removing a decommissioned member from the voters", "member", m.ID, "err", err)
			continue
		}
		delete(voter, m.ID)
		n.Log.Info("decommissioned member left the Raft voters", "member", m.ID)
	}
}

// holds reports whether id owns a partition, is a move's target, or
// holds a copy of a replicated partition (moveCopies takes it away).
func (n *Node) holds(id string) bool {
	for _, t := range n.Meta.Topics() {
		for _, a := range n.Meta.Assignments(t.Name) {
			if a.Owner == id || a.Target == id || (a.Replicated() && slices.Contains(a.Replicas, id)) {
				return true
			}
		}
	}
	return false
}
