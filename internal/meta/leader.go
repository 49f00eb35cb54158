package meta

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

const (
	// barrierTimeout bounds a barrier.
	barrierTimeout = 5 * time.Second
	// caughtUpFreshness: a follower is caught up only if it heard from the
	// leader this recently.
	caughtUpFreshness = 5 * time.Second
	// leaderPoll is WaitLeader's polling period.
	leaderPoll = 10 * time.Millisecond
)

// IsLeader reports whether this node is the Raft leader now.
func (s *Store) IsLeader() bool { return s.raft.State() == raft.Leader }

// ConfirmLeader returns nil once a quorum has confirmed that this node
// still leads (hashicorp/raft's VerifyLeader: heartbeats, no log write,
// no wait for the apply backlog), or the reason it could not: a deposed
// leader that has not noticed yet learns it here.
func (s *Store) ConfirmLeader(ctx context.Context) error {
	return s.asLeader(ctx, "confirm leadership", func(time.Duration) raft.Future { return s.raft.VerifyLeader() })
}

// asLeader starts a future that only a leader may (closed and not
// leading are refused first) and waits for it, bounded by 5 s and ctx.
func (s *Store) asLeader(ctx context.Context, what string, start func(timeout time.Duration) raft.Future) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if !s.IsLeader() {
		return s.notLeader()
	}
	ctx, cancel := context.WithTimeout(ctx, barrierTimeout)
	defer cancel()
	dl, _ := ctx.Deadline()
	if err := s.futures.wait(ctx, start(time.Until(dl))); err != nil {
		return s.raftErr(what, err)
	}
	return nil
}

// Term is this node's current Raft term.
func (s *Store) Term() uint64 { return s.raft.CurrentTerm() }

// AppliedIndex is the last Raft index applied to the FSM.
func (s *Store) AppliedIndex() uint64 { return s.raft.AppliedIndex() }

// Leader returns the current leader's ID and Raft address; empty when no
// leader is known.
func (s *Store) Leader() (id, addr string) {
	a, i := s.raft.LeaderWithID()
	return string(i), string(a)
}

// WaitLeader waits until some leader (this node or another) is known.
func (s *Store) WaitLeader(ctx context.Context) error {
	t := time.NewTicker(leaderPoll)
	defer t.Stop()
	for {
		if s.closed.Load() {
			return ErrClosed
		}
		if _, addr := s.Leader(); addr != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("meta: wait for a leader: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// AppliedCaughtUp reports whether the local replica may be trusted as
// current: a leader is known, this node heard from it within 5 s (or is
// it), and everything it knows to be committed has been applied.
//
// Raft counts an entry applied once it is handed to the FSM goroutine, so
// the last few entries may still be in flight; destructive decisions use
// ConfirmTopic, which waits on a barrier, not this.
func (s *Store) AppliedCaughtUp() bool {
	if s.closed.Load() {
		return false
	}
	switch s.raft.State() {
	case raft.Leader:
	case raft.Follower:
		if _, addr := s.Leader(); addr == "" {
			return false
		}
		if time.Since(s.raft.LastContact()) > caughtUpFreshness {
			return false
		}
	default:
		return false
	}
	return s.raft.AppliedIndex() >= s.raft.CommitIndex()
}

// Barrier waits until every entry committed before it has been applied to
// the local FSM. Leader only; bounded by 5 s and ctx. Winning an election
// proves the log, not the applied state: a leader trusts its replica for a
// destructive decision only after a barrier (docs/architecture.md, "The
// metastore").
func (s *Store) Barrier(ctx context.Context) error {
	return s.asLeader(ctx, "barrier", s.raft.Barrier)
}
