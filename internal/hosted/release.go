package hosted

import (
	"errors"
	"fmt"
)

// A replica leaving a partition's placement (its factor lowered, a
// decommission): the copy that stays alone is served as a single copy,
// and a copy no longer listed goes — but only on the metastore leader's
// word (the move shed asks it, package move), and never under a running
// role.

// ErrReplicaHosted refuses removing a partition's data while a
// replication role runs for it here, or the placement lists this node
// among its replicas again.
var ErrReplicaHosted = errors.New("a replica of the partition is hosted on this node")

// WithoutReplica runs remove (the deletion of topic/p's directory) while
// no replication role for the partition runs here: refused with
// ErrReplicaHosted when one does, or when this node's placement lists it
// among the replicas again. No role registers meanwhile — registering
// takes the same lock, and a role starting registers before it runs — so
// a role that opened the log before the removal finds it closed and is
// started again on a fresh directory: a replica added back begins empty,
// as a new one does, and never acknowledges records it no longer holds.
// remove runs under the lock that hosting lookups take; a directory
// removal is brief and happens once per removed copy.
func (r *Roles) WithoutReplica(topic string, p int, remove func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[Key{Topic: topic, Partition: p}] != nil || r.ReplicatedHere(topic, p) {
		return fmt.Errorf("partition %d of %q: %w", p, topic, ErrReplicaHosted)
	}
	return remove()
}

// UnholdSingleCopies reopens plain (not held) the held log of every
// partition this node owns whose placement no longer lists other
// replicas (the factor lowered to 1): no quorum releases its records any
// more, and everything it holds was committed or is its own — a leader's
// uncommitted tail, records whose producers were told "may be stored" —
// so all of it becomes visible, as any single copy's log is.
func (r *Roles) UnholdSingleCopies() {
	for _, op := range r.parts.Open() {
		if !r.parts.IsHeld(op.Topic, op.Partition) || r.HostsReplica(op.Topic, op.Partition) ||
			r.ReplicatedHere(op.Topic, op.Partition) {
			continue
		}
		as := r.meta.Assignments(op.Topic)
		if op.Partition >= len(as) || as[op.Partition].Replicated() || as[op.Partition].Owner != r.cfg.NodeID {
			continue // a follower's copy no longer listed: the move shed removes it
		}
		if q := r.parts.PeekQueue(op.Topic, op.Partition); q != nil {
			q.Persist()
			q.PersistCounts(true)
		}
		// A commit racing the close retries once on a fresh Get (produce.go).
		r.parts.ClosePartition(op.Topic, op.Partition)
		if _, err := r.parts.Get(op.Topic, op.Partition); err != nil {
			r.cfg.Logger.Warn("reopening a partition left with one copy", "topic", op.Topic, "partition", op.Partition, "err", err)
			continue
		}
		r.wake(op.Topic) // its whole log is visible now
		r.cfg.Logger.Info("partition left with one copy: its log reopened unheld", "topic", op.Topic, "partition", op.Partition)
	}
}
