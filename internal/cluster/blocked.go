package cluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/narad-io/narad/internal/meta"
)

// A decommission completes when the draining member holds nothing (then
// it leaves the Raft voters, retire in moves.go). Some of what it holds
// no step of the controller can take off it, and the decommission waits
// for as long as that lasts (docs/operations.md, "Decommissioning a
// node"):
//
//   - a single-copy partition it owns while it is dead: its disk holds
//     the only copy and a move copies from the source, so the partition
//     stays until the node returns (then it moves off as any other);
//   - a single-copy partition while no live member that is not draining
//     exists to move it to.
//
// Neither is guessed away (no partition is declared lost here): the
// members answer names each one with its reason, and the controller logs
// them when they change, so a decommission that cannot complete says so
// instead of waiting in silence.

// Blocked is one partition that keeps a draining member's decommission
// from completing, and why.
type Blocked struct {
	Topic     string
	Partition int
	Why       string
}

// The reasons of Blocked.Why.
const (
	WhyDeadOnlyCopy = "its only copy is on this dead node and a move copies from its source: " +
		"it stays until the node returns (then it moves off), or until the topic is deleted"
	WhyNoReceiver = "no live member that is not draining to move it to: add a node, or cancel a decommission"
)

// Placements is what DecommissionBlocked reads (*meta.Store).
type Placements interface {
	Members() []meta.Member
	Topics() []meta.Topic
	Assignments(topic string) []meta.Assignment
}

// DecommissionBlocked lists, by draining member, the partitions that keep
// its decommission from completing, in topic and partition order; a
// member with none is absent.
func DecommissionBlocked(p Placements) map[string][]Blocked {
	members := p.Members()
	state := map[string]meta.Member{}
	for _, m := range members {
		if m.Draining {
			state[m.ID] = m
		}
	}
	if len(state) == 0 {
		return nil
	}
	receivers := len(Live(members)) > 0
	topics := p.Topics()
	slices.SortFunc(topics, func(a, b meta.Topic) int { return strings.Compare(a.Name, b.Name) })
	out := map[string][]Blocked{}
	for _, t := range topics {
		for _, a := range p.Assignments(t.Name) {
			m, draining := state[a.Owner]
			if !draining || a.Replicated() || a.Target != "" {
				continue // not on a draining member, copies leave by drain.go, or a move is under way
			}
			why := ""
			switch {
			case m.State == meta.MemberDead:
				why = WhyDeadOnlyCopy
			case !receivers:
				why = WhyNoReceiver
			default:
				continue
			}
			out[m.ID] = append(out[m.ID], Blocked{Topic: a.Topic, Partition: a.Partition, Why: why})
		}
	}
	return out
}

// noteBlocked logs a draining member's blocked partitions when they
// change (the first time, a different set, and once when none are left),
// not at every tick. Controller goroutine only.
func (n *Node) noteBlocked() {
	now := DecommissionBlocked(n.Meta)
	for id, bs := range now {
		key := blockedKey(bs)
		if n.blocked[id] == key {
			continue
		}
		if n.blocked == nil {
			n.blocked = map[string]string{}
		}
		n.blocked[id] = key
		n.Log.Warn("decommission cannot complete: the member holds partitions no move can take off it",
			"member", id, "partitions", len(bs), "first", blockedList(bs, 10), "why", bs[0].Why)
	}
	for id := range n.blocked {
		if _, ok := now[id]; !ok {
			delete(n.blocked, id)
			n.Log.Info("decommission no longer blocked", "member", id)
		}
	}
}

// blockedKey identifies a blocked set, to log it once.
func blockedKey(bs []Blocked) string {
	var b strings.Builder
	for _, x := range bs {
		fmt.Fprintf(&b, "%s/%d:%s\n", x.Topic, x.Partition, x.Why)
	}
	return b.String()
}

// blockedList names at most most of bs as topic/partition.
func blockedList(bs []Blocked, most int) string {
	names := make([]string, 0, min(len(bs), most)+1)
	for _, x := range bs[:min(len(bs), most)] {
		names = append(names, fmt.Sprintf("%s/%d", x.Topic, x.Partition))
	}
	if len(bs) > most {
		names = append(names, fmt.Sprintf("and %d more", len(bs)-most))
	}
	return strings.Join(names, ", ")
}
