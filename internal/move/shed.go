package move

import (
	"context"
	"slices"
)

// shed deletes this node's copies of partitions another node owns now —
// what a move leaves behind on its source, and a replica's copy the
// placement no longer lists (its factor lowered, a decommission, see
// shedReplica). Each deletion needs the leader's confirmation (barrier
// rule) that another node owns the partition and that no move targets
// this node; any doubt keeps the copy. A partition of a topic that no
// longer exists is not this loop's: topic deletion and the startup sweep
// handle it; nor is a copy of a replica still listed (a follower's log).
func (w *Worker) shed(ctx context.Context) {
	dirs, _ := w.data.PartitionDirs() // a listing that failed (nil) sheds nothing; the next pass lists again
	for topic, parts := range dirs {
		as := w.meta.Assignments(topic)
		for _, p := range parts {
			if p >= len(as) || as[p].Owner == "" || as[p].Owner == w.self || as[p].Target == w.self {
				continue
			}
			if slices.Contains(as[p].Replicas, w.self) {
				// A replicated partition's copy here is a follower's
				// (package replica), not a move's leftover: never shed,
				// or a follower — the next leader — loses acknowledged
				// records.
				continue
			}
			// Never under a running session (it may have installed a copy
			// the leader is about to make the partition); the slot is held
			// while dropping, so none starts meanwhile.
			k := key{topic, p}
			w.mu.Lock()
			busy := w.running[k]
			if !busy {
				w.running[k] = true
			}
			w.mu.Unlock()
			if busy {
				continue
			}
			if len(as[p].Replicas) > 0 {
				w.shedReplica(ctx, topic, p)
			} else {
				w.shedOne(ctx, topic, p)
			}
			w.mu.Lock()
			delete(w.running, k)
			w.mu.Unlock()
		}
	}
}

// shedOne drops one copy once the leader confirms another node owns it.
func (w *Worker) shedOne(ctx context.Context, topic string, p int) {
	owner, target, err := w.askOwner(ctx, topic, p)
	if err != nil || owner == "" || owner == w.self || target == w.self {
		return
	}
	if err := w.drop(topic, p); err != nil {
		w.log.Warn("move: dropping a partition moved away", "topic", topic, "partition", p, "err", err)
		return
	}
	w.log.Info("dropped the copy of a partition now owned elsewhere", "topic", topic, "partition", p, "owner", owner)
}

// shedReplica drops the copy of a replica this node no longer is: its
// placement lists replicas, this node not among them. The leader's word
// is a read index (CatchUp: the leader confirms with a quorum that it
// leads and how far its state is, and this replica waits until it has
// applied as much), so the placement read after it holds every change
// acknowledged before the question; it must still not list this node as
// a replica, owner or target. The broker then removes the directory only
// while no replication role runs for it here (WithoutReplica): a
// placement that lists this node again starts its role on a fresh
// directory.
func (w *Worker) shedReplica(ctx context.Context, topic string, p int) {
	cctx, cancel := context.WithTimeout(ctx, askTimeout)
	err := w.meta.CatchUp(cctx)
	cancel()
	if err != nil {
		return
	}
	as := w.meta.Assignments(topic)
	if p >= len(as) || as[p].Owner == "" || as[p].Owner == w.self || as[p].Target == w.self ||
		len(as[p].Replicas) == 0 || slices.Contains(as[p].Replicas, w.self) {
		return
	}
	if err := w.data.WithoutReplica(topic, p, func() error { return w.drop(topic, p) }); err != nil {
		w.log.Warn("move: dropping a copy of a replica no longer placed here", "topic", topic, "partition", p, "err", err)
		return
	}
	w.log.Info("dropped the copy of a replica no longer placed here", "topic", topic, "partition", p,
		"owner", as[p].Owner, "replicas", as[p].Replicas)
}

// liftExpired lifts freezes whose TTL passed — a move whose destination
// died before flipping — but only when the leader confirms this node still
// owns the partition, and only the very freeze it saw expire on this
// node's clock (a session that renewed it meanwhile keeps it). After a
// flip the answer is another owner and the freeze stays until the copy is
// shed: a stale copy never takes a commit.
func (w *Worker) liftExpired(ctx context.Context) {
	for _, e := range w.freezes.expired() {
		owner, _, err := w.askOwner(ctx, e.topic, e.p)
		if err != nil || owner != w.self {
			continue
		}
		dir, err := w.data.Dir(e.topic, e.p)
		if err != nil {
			continue
		}
		if lifted, err := w.freezes.liftExpired(e, dir); err == nil && lifted {
			w.log.Info("lifted an expired move freeze: this node still owns the partition", "topic", e.topic, "partition", e.p)
		}
	}
}
