package meta

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Result describes an applied command.
type Result struct {
	// Index is the command's Raft index: the new Version of every topic it
	// wrote and the new value of every version counter it moved.
	Index uint64
}

// Apply proposes cmd through Raft and waits until it is applied here. It
// returns the command's outcome error (ErrExists, ErrNotFound, ErrConflict,
// ErrInvalid), a *NotLeaderError on a follower (the cluster layer forwards
// the encoded command to that leader), or an error saying the outcome is
// unknown (context expired or leadership lost after proposing: the command
// may still commit).
//
// The wait is bounded by ctx, or by Options.ApplyTimeout when ctx has no
// deadline.
func (s *Store) Apply(ctx context.Context, cmd Command) (Result, error) {
	if s.closed.Load() {
		return Result{}, ErrClosed
	}
	if s.raft.State() != raft.Leader {
		return Result{}, s.notLeader()
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("meta: %s: %w", cmd.Op, err) // not proposed
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.ApplyTimeout)
		defer cancel()
	}
	dl, _ := ctx.Deadline()
	timeout := time.Until(dl)
	if timeout <= 0 {
		return Result{}, fmt.Errorf("meta: %s: %w", cmd.Op, context.DeadlineExceeded)
	}
	// raft.Apply's timeout only bounds getting the entry queued; the commit
	// wait is bounded by ctx (futures.go).
	f := s.raft.Apply(cmd.Encode(), timeout)
	if err := s.futures.wait(ctx, f); err != nil {
		return Result{}, s.raftErr(cmd.Op.String(), err)
	}
	res := Result{Index: f.Index()}
	if err, ok := f.Response().(error); ok && err != nil {
		return res, err
	}
	return res, nil
}

// raftErr translates Raft's errors into the metastore's vocabulary.
func (s *Store) raftErr(what string, err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader):
		return s.notLeader()
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrClosed
	case errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return fmt.Errorf("meta: %s: %w: %w", what, ErrOutcomeUnknown, err)
	}
	return fmt.Errorf("meta: %s: %w", what, err)
}

func (s *Store) notLeader() error {
	id, addr := s.Leader()
	return &NotLeaderError{LeaderID: id, LeaderAddr: addr}
}

func (s *Store) propose(ctx context.Context, op Op, payload any) error {
	cmd, err := NewCommand(op, payload)
	if err != nil {
		return err
	}
	_, err = s.Apply(ctx, cmd)
	return err
}

// CreateTopic creates t with its initial placements (any subset of its
// partitions; the rest stay unplaced) and, with attach, links it under a
// parent in the same command: either both happen or neither. CreatedAt is
// stamped here when zero, so every replica stores the same value, and
// ModifiedAt, when zero, is CreatedAt.
func (s *Store) CreateTopic(ctx context.Context, t Topic, assignments []Assignment, attach *AttachSpec) error {
	if t.CreatedAt == 0 {
		t.CreatedAt = time.Now().Unix()
	}
	if t.ModifiedAt == 0 {
		t.ModifiedAt = t.CreatedAt
	}
	// The FSM binds the owner's ID at apply; left out of the payload, the
	// command reads the same to a binary that does not know the field.
	t.OwnerID = 0
	return s.propose(ctx, OpCreateTopic, CreateTopicCmd{Topic: t, Assignments: assignments, Attach: attach})
}

// UpdateTopic alters a topic's settings, schema or partition count.
func (s *Store) UpdateTopic(ctx context.Context, u TopicUpdate) error {
	return s.propose(ctx, OpUpdateTopic, u)
}

// DeleteTopic deletes a topic and its assignments, detaches its children
// (they stay as standalone topics, keeping the schema they inherited) and
// removes it from its parent.
func (s *Store) DeleteTopic(ctx context.Context, name string) error {
	return s.propose(ctx, OpDeleteTopic, DeleteTopicCmd{Name: name, KeepSchema: true})
}

// Attach links child under spec.Parent.
func (s *Store) Attach(ctx context.Context, child string, spec AttachSpec) error {
	return s.propose(ctx, OpAttach, AttachCmd{Child: child, AttachSpec: spec})
}

// Detach removes the link parent → child; a non-empty epoch must be the
// child's current attach epoch. The child keeps the schema it inherited.
func (s *Store) Detach(ctx context.Context, parent, child, epoch string) error {
	return s.propose(ctx, OpDetach, DetachCmd{Parent: parent, Child: child, Epoch: epoch, KeepSchema: true})
}

// SetAssignments replaces the given partitions' placements.
func (s *Store) SetAssignments(ctx context.Context, as []Assignment) error {
	return s.propose(ctx, OpSetAssignments, SetAssignmentsCmd{Assignments: as})
}

// UpsertMember creates or replaces a member record (an empty State means
// alive).
func (s *Store) UpsertMember(ctx context.Context, m Member) error {
	return s.propose(ctx, OpUpsertMember, UpsertMemberCmd{Member: m})
}
