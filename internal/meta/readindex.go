package meta

import (
	"context"
	"fmt"
	"time"
)

// Read-your-writes across nodes. Reads are local, and a follower's replica
// trails the leader by the replication delay: right after a topic create
// answered 201 on one node, another may not know the topic for a few
// milliseconds. A node about to answer "no such thing" first asks the
// leader how far the shared state is (ReadIndex) and waits until its own
// replica has applied as much (WaitVersion): every write acknowledged
// before the question is then visible here.

// ReadIndex returns a metastore version that covers every write
// acknowledged before the call: the leader's LatestDomainVersion, asked of
// the leader through the Confirmer unless this node leads. Domain versions
// are Raft indexes, so comparable across nodes (WaitVersion).
func (s *Store) ReadIndex(ctx context.Context) (uint64, error) {
	if s.IsLeader() {
		return s.ReadIndexAsLeader(ctx)
	}
	var v uint64
	err := s.askLeader("read index", func(c Confirmer, leader Member) (err error) {
		v, err = c.ReadIndex(ctx, leader)
		return err
	})
	return v, err
}

// ReadIndexAsLeader answers a read index on this node, which must lead. It
// first confirms with a quorum that it still does (a deposed leader that
// has not noticed would answer from a stale state), without writing to the
// log; a leader that has not applied everything committed yet (just
// elected) passes a barrier first. Its applied version then covers every
// write any leader acknowledged: an acknowledged write was committed, and
// a leader's log holds every committed entry.
func (s *Store) ReadIndexAsLeader(ctx context.Context) (uint64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	if !s.IsLeader() {
		return 0, s.notLeader()
	}
	ctx, cancel := context.WithTimeout(ctx, barrierTimeout)
	defer cancel()
	if err := s.ConfirmLeader(ctx); err != nil {
		return 0, fmt.Errorf("meta: read index: %w", err)
	}
	if s.raft.AppliedIndex() < s.raft.CommitIndex() {
		if err := s.Barrier(ctx); err != nil {
			return 0, fmt.Errorf("meta: read index: %w", err)
		}
	}
	return s.LatestDomainVersion(), nil
}

// WaitVersion waits until this replica's LatestDomainVersion reaches v, or
// ctx ends; it reports whether it did.
func (s *Store) WaitVersion(ctx context.Context, v uint64) bool {
	for {
		ch := s.Watch() // taken before the check: a change racing it still wakes us
		if s.LatestDomainVersion() >= v {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// CatchUp is read-your-writes before a "does not exist": it waits until
// this replica has applied every write acknowledged anywhere before the
// call (ReadIndex, then WaitVersion), within ctx. An error means it could
// not tell (no leader, the leader unreachable, ctx ended); the caller then
// answers from what its replica knows.
func (s *Store) CatchUp(ctx context.Context) error {
	v, err := s.ReadIndex(ctx)
	if err != nil {
		return err
	}
	if !s.WaitVersion(ctx, v) {
		return fmt.Errorf("meta: catch up to version %d: %w (at %d)", v, ctx.Err(), s.LatestDomainVersion())
	}
	return nil
}

// CatchUpBound bounds a read-your-writes wait: past it the replica is
// behind for a reason (cut off from the leader) and the caller answers
// from what it knows.
const CatchUpBound = 2 * time.Second

// WaitVersionWithin is WaitVersion for at most within.
func (s *Store) WaitVersionWithin(ctx context.Context, v uint64, within time.Duration) bool {
	if s.LatestDomainVersion() >= v {
		return true // the usual case (every remote commit asks): no timer to arm and stop
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	return s.WaitVersion(ctx, v)
}

// CatchUpUnlessKnown gives a caller that saw topic (and, if parts are
// given, an owner for each of them) on another node read-your-writes
// here: unless this replica knows as much already, it catches up with the
// leader (CatchUp) for at most CatchUpBound. A topic that truly does not
// exist costs one question to the leader. It returns nothing: on failure
// the caller answers from what the replica knows, as it would anyway.
func (s *Store) CatchUpUnlessKnown(ctx context.Context, topic string, parts ...int) {
	if s.knows(topic, parts) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, CatchUpBound)
	defer cancel()
	_ = s.CatchUp(ctx)
}

// knows reports whether this replica has topic and an owner for each of
// parts.
func (s *Store) knows(topic string, parts []int) bool {
	t, ok := s.Topic(topic)
	if !ok {
		return false
	}
	for _, p := range parts {
		if o, _ := s.Owner(topic, p); p >= t.Partitions || o == "" {
			return false
		}
	}
	return true
}
