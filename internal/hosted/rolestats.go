package hosted

import (
	"errors"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/storage"
)

// What the replication roles report and copy beside the records: the
// leader's consumer frontier copied to followers, the gauges and logs of
// a leader's progress and stalls, the refusals in the data plane's
// words, and what describe shows of a replicated partition.

// copyFrontier writes the leader's consumer frontier into this follower's
// frontier file, at most once per frontierCopyEvery, never above what this
// replica holds and has released (so a takeover here never finds it above
// its high watermark): consumers resume near where they were, with
// duplicates and never a gap.
func (r *Roles) copyFrontier(h *Role, f uint64) {
	h.fmu.Lock()
	defer h.fmu.Unlock()
	now := r.cfg.Now()
	f = min(f, h.log.HWM())
	if f <= h.frontier || now.Sub(h.frontierAt) < frontierCopyEvery {
		return
	}
	dir, err := r.parts.Dir(h.key.Topic, h.key.Partition)
	if err != nil {
		return
	}
	if err := h.log.PersistHWM(f); err == nil {
		err = storage.WriteOffsetFileFS(r.parts.FS(), dir+"/"+storage.ConsumerOffsetFile, f)
		if err == nil {
			h.frontier, h.frontierAt = f, now
			return
		}
	}
	r.m.Errors.WithLabelValues("broker", "frontier_copy").Inc()
}

// leaderFrontier is what a leader of k sends its followers with every
// fetch answer: the consumer frontier it last made durable, but never
// past a scheduled record not settled — the schedule stays on this node,
// so a follower that took over with a frontier past such a record would
// never deliver it. It reads it again instead, and files it anew from its
// due time (the record carries it).
//
// With the queue loaded that is in memory. Without it (no consume has
// loaded it on this node) it is the frontier file, read at most once per
// frontierCopyEvery and kept in between: a follower writes what it is
// sent no more often than that anyway, and reading the file for every
// fetch answer cost a leader an open, a read and a close per fetch (2–3%
// of a node's CPU under three-copy produce).
func (r *Roles) leaderFrontier(k Key) func() uint64 {
	var (
		mu     sync.Mutex
		read   uint64
		readAt time.Time
	)
	return func() uint64 {
		if q := r.parts.PeekQueue(k.Topic, k.Partition); q != nil {
			f := q.Persisted()
			if low, ok := q.ScheduleLow(); ok {
				f = min(f, low)
			}
			return f
		}
		mu.Lock()
		defer mu.Unlock()
		if now := r.cfg.Now(); readAt.IsZero() || now.Sub(readAt) >= frontierCopyEvery || now.Before(readAt) {
			read, _ = r.parts.Frontier(k.Topic, k.Partition) // unreadable: 0, which followers take as none sent
			readAt = now
		}
		return read
	}
}

// gaugeReplicas counts leaders that became writable and, on leaders,
// sets the in-sync size and the replication lag: records the slowest
// follower lacks, and how long since it last held the leader's end.
func (r *Roles) gaugeReplicas(want map[Key]replica.View) {
	for k := range want {
		h := r.hosted(k.Topic, k.Partition)
		if h == nil || h.leader == nil {
			continue
		}
		r.noteReady(h)
		st := h.leader.Stats()
		lbl := []string{k.Topic, partLabel(k.Partition)}
		r.m.ReplicasInSync.WithLabelValues(lbl...).Set(float64(st.InSync))
		var recs uint64
		var secs float64
		for _, f := range st.Followers {
			recs = max(recs, f.Records)
			if f.Records > 0 {
				secs = max(secs, f.Time.Seconds())
			}
		}
		r.m.ReplicationLagRecords.WithLabelValues(lbl...).Set(float64(recs))
		r.m.ReplicationLagSeconds.WithLabelValues(lbl...).Set(secs)
		r.noteStall(h, st, lbl)
	}
}

// CommitStall is why the replicated partition this node leads cannot
// commit ("" when it can, or when this node does not lead it).
func (r *Roles) CommitStall(topic string, p int) string {
	if h := r.hosted(topic, p); h != nil && h.leader != nil {
		return h.leader.Stats().Stall
	}
	return ""
}

// noteStall exports a leader's commit stall (replica.LeaderStats.Stall)
// and logs when one begins and ends: a leader that reaches the metastore
// but none of its followers takes no write, and this is where an
// operator learns why. Reconcile's goroutine only.
func (r *Roles) noteStall(h *Role, st replica.LeaderStats, lbl []string) {
	r.m.CommitStallSeconds.WithLabelValues(lbl...).Set(st.StallFor.Seconds())
	if st.Stalls > h.stalls {
		r.m.CommitStalls.WithLabelValues(lbl...).Add(float64(st.Stalls - h.stalls))
		r.cfg.Logger.Warn("replicated partition cannot commit: produces wait and answer 503", "topic", h.key.Topic,
			"partition", h.key.Partition, "epoch", st.Epoch, "waiting", st.StallFor.Round(time.Millisecond), "why", st.Stall)
	} else if h.stalled && st.Stall == "" {
		r.cfg.Logger.Info("replicated partition commits again", "topic", h.key.Topic, "partition", h.key.Partition, "epoch", st.Epoch)
	}
	h.stalls, h.stalled = st.Stalls, st.Stall != ""
}

// replicaRefusal puts the engine's refusals in the data plane's typed
// words (package refusal), for node RPC and the client API.
func replicaRefusal(err error, topic string, p int) error {
	switch {
	case errors.Is(err, replica.ErrStaleEpoch), errors.Is(err, replica.ErrWrongPartition):
		return refusal.New(refusal.ErrStaleEpoch, 200*time.Millisecond, "partition %d of %q: %v", p, topic, err)
	case errors.Is(err, replica.ErrNotReady):
		return refusal.New(refusal.ErrNotReady, 200*time.Millisecond, "partition %d of %q: this node leads it but its epoch start is not in the metastore yet: retry", p, topic)
	case errors.Is(err, replica.ErrDeposed), errors.Is(err, replica.ErrNotReplica):
		return refusal.New(refusal.ErrNotLeader, time.Second, "partition %d of %q is no longer led by this node: retry", p, topic)
	case errors.Is(err, replica.ErrStateLost), errors.Is(err, replica.ErrOffsetAhead):
		return refusal.New(refusal.ErrNotReady, time.Second, "partition %d of %q: this node lost records it had (a replaced disk?) and may not lead it; another replica will: retry", p, topic)
	}
	return err
}

// ReplicaInfo is what the describe shows of a replicated partition.
func (r *Roles) ReplicaInfo(t meta.Topic, p int) (replicas, inSync []string) {
	if t.ReplicationFactor <= 1 {
		return nil, nil
	}
	as := r.meta.Assignments(t.Name)
	if p < 0 || p >= len(as) || !as[p].Replicated() {
		return nil, nil
	}
	return as[p].Replicas, as[p].InSync
}
