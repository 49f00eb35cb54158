package cluster

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// The controller's work on the copies of replicated partitions, one tick
// of it, in this order:
//
//  1. copies leaving (drain.go): off a draining member, or marked leaving
//     by a rebalance (meta.Assignment.Leaving) — replacement first, in
//     sync, leadership handed over, then removal;
//  2. the replication factor (reconcile, failover.go), on partitions with
//     no copy leaving;
//  3. heals (heal.go): a copy on a node silent past Node.HealAfter is
//     marked leaving in the command that adds its replacement;
//  4. new rebalance moves (rebalance.go): copies from the fullest
//     receivers to the emptiest, each started the same way;
//  5. leadership spread (leaders.go).
//
// Each step reads the placement as the metastore holds it and proposes
// epoch-checked commands; nothing is kept between ticks but what the
// metastore holds, so a new controller goes on where the old one stopped.
// The steps never fight: a partition with a copy leaving is step 1's
// alone, step 3 only partitions with exactly their factor of copies and
// one on a lost node, steps 4 and 5 only partitions that are fully in
// sync with every copy on a heard receiver, and each step's change is one the
// others leave as it is (copies_property_test.go runs this same sequence
// over a model of the metastore's rules and checks it).

// placements is what the copy work reads and proposes: the metastore, or
// a test's model of its rules.
type placements interface {
	Topics() []meta.Topic
	Assignments(topic string) []meta.Assignment
	SetReplicas(ctx context.Context, topic string, partition int, epoch uint64, replicas []string, leaving string) error
	ElectLeader(ctx context.Context, topic string, partition int, epoch uint64, to string) error
}

// copyView is what the copy work reads besides the placement: members,
// and whom the controller heard from.
type copyView struct {
	// live: Live (alive, not draining) and not lost, sorted — the receivers
	live     []string
	draining func(string) bool // decommissioned
	gone     func(string) bool // marked dead, or unknown: blocks no wait
	// lost: silent past Node.HealAfter — its copies are re-created
	// elsewhere (heal.go), and, like gone, it blocks no wait. nil: none.
	lost func(string) bool
	// heard: heard from within FailoverAfter, on its recorded disk — the
	// only kind elected, and the only kind a rebalance involves.
	heard func(string) bool
	// leads is how many replicated partitions a node leads (nil: none
	// counted): a handover goes to the copy that leads fewest.
	leads func(string) int
}

// copyWork is one tick's copy work.
type copyWork struct {
	copyView
	st  placements
	log *slog.Logger
	// removed is told each node a copy was removed from (retire's
	// grace); nil: nobody is told.
	removed func(id string)
	// healed is told of each heal started (narad_replica_heals_total);
	// nil: nobody is told.
	healed  func()
	leaders map[string]int // leads' counts, kept current through the tick's elections
}

func newCopyWork(st placements, log *slog.Logger, v copyView, removed func(string)) *copyWork {
	w := &copyWork{copyView: v, st: st, log: log, removed: removed}
	w.leads = func(id string) int { return w.leaders[id] }
	return w
}

// tick runs the five steps.
func (w *copyWork) tick(ctx context.Context) {
	w.leaders = map[string]int{}
	for _, t := range w.st.Topics() {
		for _, a := range w.st.Assignments(t.Name) {
			if a.Replicated() && a.Owner != "" {
				w.leaders[a.Owner]++
			}
		}
	}
	w.moveCopies(ctx)
	w.reconcile(ctx)
	w.heal(ctx)
	w.rebalance(ctx)
	w.balanceLeaders(ctx)
}

// elected keeps the leader counts current after an election.
func (w *copyWork) elected(from, to string) {
	w.leaders[from]--
	w.leaders[to]++
}

// healthy reports whether a replicated partition may be rebalanced: placed,
// not moving, no copy leaving, every copy in sync and on a receiver heard
// from. Only such a partition gets a new copy or a new leader for balance.
func healthy(a meta.Assignment, v copyView) bool {
	if !a.Replicated() || a.Owner == "" || a.Target != "" || a.Leaving != "" || len(a.InSync) != len(a.Replicas) {
		return false
	}
	for _, id := range a.Replicas {
		if !slices.Contains(v.live, id) || !v.heard(id) {
			return false
		}
	}
	return true
}

// copies is this tick's copy work over the metastore. heard is as
// failover's: only a member whose latest heartbeat named its recorded
// disk is elected (disks.go). A lost member (heal.go) receives no copy:
// it is left out of the receivers.
func (n *Node) copies(now time.Time) *copyWork {
	members := n.Meta.Members()
	state := map[string]meta.Member{}
	for _, m := range members {
		state[m.ID] = m
	}
	lost := n.lostFor(n.HealAfter, now)
	v := copyView{
		live:     slices.DeleteFunc(Live(members), lost),
		draining: func(id string) bool { return state[id].Draining },
		gone:     func(id string) bool { m, ok := state[id]; return !ok || m.State == meta.MemberDead },
		lost:     lost,
		heard:    n.heardFrom(state, now),
	}
	w := newCopyWork(n.Meta, n.Log, v, func(id string) {
		if n.copyLeft == nil {
			n.copyLeft = map[string]time.Time{}
		}
		n.copyLeft[id] = n.clock().Now()
	})
	if n.Heals != nil {
		w.healed = n.Heals.Inc
	}
	return w
}

// heardFrom reports whether a member was heard from within FailoverAfter
// of now, alive, on its recorded disk.
func (n *Node) heardFrom(state map[string]meta.Member, now time.Time) func(string) bool {
	return func(id string) bool {
		m, ok := state[id]
		return ok && m.State != meta.MemberDead && now.Sub(n.seen(id)) <= n.timings().FailoverAfter && n.onRecordedDisk(m)
	}
}
