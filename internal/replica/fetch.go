package replica

import (
	"context"
	"slices"
	"time"
)

// HandleFetch answers a follower's fetch: it records req.Offset as the
// follower's acknowledgement (its durable end), moves the committed point
// and releases it, then returns the records from req.Offset (waiting up
// to req.Wait, bounded by MaxWait, when there are none yet) with the
// committed point.
//
// Refused, changing nothing: another epoch (*EpochError, ErrStaleEpoch),
// another partition (ErrWrongPartition), a node that is not a follower
// here (ErrNotReplica), before the epoch start is recorded (ErrNotReady),
// after the leadership ended (ErrDeposed), an offset past what the leader
// has written (ErrOffsetAhead).
func (l *Leader) HandleFetch(ctx context.Context, req FetchRequest) (FetchResponse, error) {
	l.mu.Lock()
	v := l.view
	resp := FetchResponse{Epoch: v.Epoch}
	if err := l.admitLocked(req); err != nil {
		l.mu.Unlock()
		return resp, err
	}
	l.ackLocked(req.Follower, req.DiskID, req.Offset, l.clk.Now())
	l.advanceLocked()
	l.checkLocked()
	l.mu.Unlock()

	maxBytes := req.MaxBytes
	if maxBytes <= 0 {
		maxBytes = l.cfg.MaxBytes
	}
	// Taken before the read, so an append between the read and the wait
	// still wakes it.
	moved := l.log.EndNotify()
	if err := l.read(req, maxBytes, &resp); err != nil {
		return resp, err
	}
	if len(resp.Records) == 0 && len(resp.Frames) == 0 && req.Wait > 0 {
		t := l.clk.NewTimer(min(req.Wait, l.cfg.MaxWait))
		select {
		case <-moved:
		case <-t.C():
		case <-l.endCh:
		case <-ctx.Done():
		}
		t.Stop()
		if err := l.read(req, maxBytes, &resp); err != nil {
			return resp, err
		}
	}
	resp.Committed = l.Committed()
	if l.cfg.Frontier != nil {
		resp.Frontier = l.cfg.Frontier()
	}
	if l.cfg.State != nil {
		// Only when changed since the follower last applied it: a busy
		// partition's answers stay records, not repeated state.
		if st := l.cfg.State(); st.Version != 0 && st.Version != req.StateVersion {
			resp.StateVersion, resp.Counts, resp.Cursors = st.Version, st.Counts, st.Cursors
		}
	}
	return resp, nil
}

// read fills resp with what a fetch gets from req.Offset: the log's
// frames as stored when the follower takes them and they can serve this
// fetch (no re-encoding on either side), its records otherwise.
func (l *Leader) read(req FetchRequest, maxBytes int, resp *FetchResponse) error {
	if req.Frames {
		f, err := l.log.ReadFrames(req.Offset, maxBytes)
		if err != nil || f != nil {
			resp.Frames = f
			return err
		}
	}
	recs, err := l.log.ReadTo(req.Offset, l.cfg.MaxRecords, maxBytes)
	resp.Records = recs
	return err
}

func (l *Leader) admitLocked(req FetchRequest) error {
	v := l.view
	switch {
	case req.Topic != v.Topic || req.Partition != v.Partition || req.Incarnation != v.Incarnation:
		return ErrWrongPartition
	case l.ended != nil:
		return l.ended
	case req.Epoch != v.Epoch:
		return &EpochError{Have: v.Epoch, Asked: req.Epoch}
	case req.Follower == l.cfg.Self || !slices.Contains(v.Replicas, req.Follower):
		return ErrNotReplica
	}
	if err := l.writableLocked(); err != nil {
		return err
	}
	if req.Offset > l.log.Written() {
		// In the leader's own epoch a follower holds only records this
		// leader wrote, in this process (a leader never resumes an epoch
		// after a restart, begin): the leader lost records it wrote (a
		// replaced disk). It stops writing; another replica must lead.
		// Past End() and up to Written() is a follower that copied what
		// the leader has not made durable yet: its acknowledgement counts,
		// the leader's own End() bounds the committed point.
		l.stateErr = ErrStateLost
		return ErrOffsetAhead
	}
	return nil
}

// ackLocked records a fetch from offset off, by node on disk, at now.
func (l *Leader) ackLocked(node, disk string, off uint64, now time.Time) {
	p := l.peers[node]
	end := l.log.End()
	if p.known && p.disk != disk {
		// Another disk: what the old one acknowledged is gone with it.
		// The new one starts out of date, as a follower that went back.
		*p = peer{caughtUpAt: now.Add(-l.cfg.LagMax - time.Nanosecond)}
	}
	switch {
	case p.known && off < p.acked:
		// The follower's durable end went back: it lost records (a
		// replaced disk) or this is a late duplicate. Either way it is not
		// caught up; if it is in the in-sync set the next check drops it.
		p.caughtUpAt = now.Add(-l.cfg.LagMax - time.Nanosecond)
	case off >= end:
		p.caughtUpAt = now
	case p.known && off >= p.endAtLastFetch && p.lastFetchAt.After(p.caughtUpAt):
		p.caughtUpAt = p.lastFetchAt
	}
	p.known, p.acked, p.disk = true, off, disk
	p.lastFetchAt, p.endAtLastFetch = now, end
}
