package cluster

import (
	"slices"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// A replicated partition's leader that still reaches the metastore leader
// but none of its followers keeps its heartbeats, so silence alone never
// moves its leadership; and it cannot commit, for a commit needs a
// majority of the copies. Its followers can tell: each node reports with
// its heartbeat the leaders its followers have not reached (package
// hosted), and the controller moves the leadership once those reports
// show that the leader cannot reach a majority (docs/replication-faults.md,
// "A leader its followers cannot reach").

// LeaderReport is a follower's report that its fetches have not reached
// the partition's Leader at Epoch for For, up to its heartbeat's sending.
// A duration, not a time: the nodes' clocks differ.
type LeaderReport struct {
	Topic       string
	Partition   int
	Leader      string
	LeaderEpoch uint64
	For         time.Duration
}

// reportsAt is a member's latest reports: its heartbeat's arrival, the
// Raft term of the leadership that answered it, and what it carried.
type reportsAt struct {
	at      time.Time
	term    uint64
	reports []LeaderReport
}

// noteReports keeps a member's latest reports, replacing what it sent
// before: a heartbeat without a report withdraws the earlier ones.
func (n *Node) noteReports(id string, at time.Time, term uint64, reports []LeaderReport) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.reports == nil {
		n.reports = map[string]reportsAt{}
	}
	if old := n.reports[id]; term > old.term || (term == old.term && !at.Before(old.at)) {
		n.reports[id] = reportsAt{at: at, term: term, reports: slices.Clone(reports)}
	}
}

// cutOff is the copies of a — its leader heard, in sync, not dead — that
// report its leader at its current epoch unreachable for at least
// FailoverAfter, when they are a majority of a's copies; nil otherwise.
// Such a leader cannot reach a majority, so it commits nothing; and a
// leader a majority still reaches is never taken for cut off, however
// many of the rest report: one follower with a broken link never deposes
// a leader the others fetch from. Only reports heard in this leader's
// current term count, from a heartbeat within FenceAfter (a report is as
// old as the heartbeat that brought it), and no sooner than FailoverAfter
// after this controller last moved a's leadership, so a partition whose
// links flap does not have its leadership flap with them.
func (n *Node) cutOff(a meta.Assignment, now time.Time) []string {
	t := n.timings()
	if last, ok := n.handedOff[partKey{a.Topic, a.Partition}]; ok && now.Sub(last) < t.FailoverAfter {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var from []string
	for _, id := range a.Replicas {
		r, ok := n.reports[id]
		if id == a.Owner || !ok || r.term != n.leaderTerm || now.Sub(r.at) > t.FenceAfter {
			continue
		}
		for _, rep := range r.reports {
			if rep.Topic == a.Topic && rep.Partition == a.Partition && rep.Leader == a.Owner && rep.LeaderEpoch == a.LeaderEpoch &&
				now.Sub(r.at.Add(-rep.For)) >= t.FailoverAfter {
				from = append(from, id)
				break
			}
		}
	}
	if len(from) <= len(a.Replicas)/2 {
		return nil
	}
	return from
}

// partKey names a partition.
type partKey struct {
	topic     string
	partition int
}

// noteHandOff records that this controller moved k's leadership at now,
// and forgets the hand-offs older than FailoverAfter: cutOff no longer
// waits on them, and a deleted topic's would otherwise stay for ever.
func (n *Node) noteHandOff(k partKey, now time.Time) {
	if n.handedOff == nil {
		n.handedOff = map[partKey]time.Time{}
	}
	for old, at := range n.handedOff {
		if now.Sub(at) >= n.timings().FailoverAfter {
			delete(n.handedOff, old)
		}
	}
	n.handedOff[k] = now
}
