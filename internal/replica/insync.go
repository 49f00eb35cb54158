package replica

import (
	"context"
	"slices"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// tick is one turn of the leader's loop: propose a missing epoch start
// (or renewal) again, checkpoint the committed point, and change the in-sync set when
// a member lags (never below a majority) or a follower caught up.
//
// One change is in flight at a time, and the committed point is computed
// over it joined with the view's set until the view shows it. A failed
// proposal may still apply (a timeout), so its set stays in that union
// until a later proposal succeeds (the metastore applies one leader's
// proposals in order, so the later one wins); the next proposal is
// decided afresh, never the failed one again from old facts — re-stating
// the view's set if nothing else is wanted.
func (l *Leader) tick(ctx context.Context) {
	l.mu.Lock()
	if l.ended != nil || l.stateErr != nil {
		l.mu.Unlock()
		return
	}
	now := l.clk.Now()
	l.noteStallLocked(now)
	if !l.ready {
		again := now.Sub(l.proposedAt) >= time.Second
		l.mu.Unlock()
		if again {
			l.proposeNext(ctx)
		}
		return
	}
	var next []string
	if l.pending == nil {
		next = l.nextInSyncLocked(now)
		if next == nil && len(l.uncertain) > 0 {
			next = slices.Clone(l.view.InSync)
		}
		l.pending = next
	}
	var cmd meta.SetInSyncCmd
	if next != nil {
		cmd = l.proposalLocked(next)
	}
	l.mu.Unlock()
	_ = l.checkpoint(false) // a failed checkpoint is tried again next tick
	if next == nil {
		return
	}
	err := l.cfg.Proposer.SetInSync(ctx, cmd)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// Refused (deposed: the view will say so) or unknown.
		l.uncertain = append(l.uncertain, next)
		if slices.Equal(l.pending, next) {
			l.pending = nil
		}
		return
	}
	l.uncertain = nil
	if l.pending != nil && sameSet(l.pending, l.view.InSync) {
		l.pending = nil // the view showed it already
	}
	l.checkLocked()
}

// proposalLocked is the SetInSync command for set, with the evidence the
// metastore checks for a member it adds (meta.SetInSyncCmd): the set the
// view holds and its version (From, FromVersion), and for each follower
// of set that fetched in this epoch the disk its fetches came from and its
// acknowledged end there, with the point they are compared to. A follower whose disk
// was replaced is re-admitted only for fetches from the new one
// (ackLocked forgets the old disk's).
func (l *Leader) proposalLocked(set []string) meta.SetInSyncCmd {
	v := l.view
	c := meta.SetInSyncCmd{Topic: v.Topic, Partition: v.Partition, Epoch: v.Epoch, Leader: l.cfg.Self,
		InSync: set, From: slices.Clone(v.InSync), FromVersion: v.InSyncVersion, Committed: l.committed}
	for _, n := range set {
		p := l.peers[n]
		if p == nil || !p.known {
			continue
		}
		if c.Acked == nil {
			c.Acked = map[string]uint64{}
		}
		c.Acked[n] = p.acked
		if p.disk != "" {
			if c.Disks == nil {
				c.Disks = map[string]string{}
			}
			c.Disks[n] = p.disk
		}
	}
	return c
}

// nextInSyncLocked is the in-sync set the leader wants now, or nil if it
// is the current one. A member whose fetches have not reached the leader's
// end for LagMax leaves (the longest lagging first), while more than a
// majority remain; a follower whose durable end is at least the
// committed point and this epoch's start, and that is not lagging,
// joins. (What an earlier process of this node may have committed is
// below this epoch's start: a leader never resumes an epoch, begin.) The order is the replicas' order.
func (l *Leader) nextInSyncLocked(now time.Time) []string {
	v := l.view
	maj := meta.Majority(len(v.Replicas))
	keep := map[string]bool{l.cfg.Self: true}
	for _, n := range v.InSync {
		keep[n] = true
	}
	var laggards []string
	for _, n := range v.InSync {
		if p := l.peers[n]; p != nil && now.Sub(p.caughtUpAt) > l.cfg.LagMax {
			laggards = append(laggards, n)
		}
	}
	slices.SortStableFunc(laggards, func(a, b string) int { return l.peers[a].caughtUpAt.Compare(l.peers[b].caughtUpAt) })
	size := len(keep)
	for _, n := range laggards {
		if size <= maj {
			break
		}
		delete(keep, n)
		size--
	}
	start, _ := startOf(v.EpochStarts, v.Epoch)
	for _, n := range v.Replicas {
		p := l.peers[n]
		if keep[n] || p == nil || !p.known {
			continue
		}
		if p.acked >= max(l.committed, start.Offset) && now.Sub(p.caughtUpAt) <= l.cfg.LagMax {
			keep[n] = true
		}
	}
	var next []string
	for _, n := range v.Replicas {
		if keep[n] {
			next = append(next, n)
		}
	}
	if sameSet(next, v.InSync) {
		return nil
	}
	return next
}

// FollowerLag is one follower as its leader sees it.
type FollowerLag struct {
	Node    string
	InSync  bool
	Records uint64        // the leader's end minus the follower's acknowledged end
	Time    time.Duration // since its fetches last reached the leader's end
}

// LeaderStats is what the metrics need of a Leader.
type LeaderStats struct {
	Epoch     uint64
	Ready     bool
	InSync    int // members of the view's in-sync set
	End       uint64
	Committed uint64
	Followers []FollowerLag // in the replicas' order
	// Stall says why the committed point has not moved for more than
	// LagMax while records wait ("" when it is not stalled); StallFor is
	// how long they have waited, Stalls how many stalls this leadership
	// has had (stall.go).
	Stall    string
	StallFor time.Duration
	Stalls   uint64
}

// Stats is a snapshot for metrics and the describe.
func (l *Leader) Stats() LeaderStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clk.Now()
	end := l.log.End()
	s := LeaderStats{Epoch: l.view.Epoch, Ready: l.ready && l.ended == nil, InSync: len(l.view.InSync), End: end, Committed: l.committed,
		Stall: l.stall, Stalls: l.stalls}
	if l.stall != "" {
		s.StallFor = now.Sub(l.waitingSince)
	}
	for _, n := range l.view.Replicas {
		p := l.peers[n]
		if p == nil {
			continue
		}
		f := FollowerLag{Node: n, InSync: slices.Contains(l.view.InSync, n), Records: end, Time: now.Sub(p.caughtUpAt)}
		if p.known && p.acked <= end {
			f.Records = end - p.acked
		}
		s.Followers = append(s.Followers, f)
	}
	return s
}
