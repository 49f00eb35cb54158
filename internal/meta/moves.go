package meta

import (
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Moves (docs/architecture.md, "Moves"): the controller sets a partition's
// target; the target node copies the partition and flips ownership to itself
// with a compare-and-swap. Both are conditional so that a stale proposal (the
// owner changed, the target changed) can never misplace a partition.

// SetTargetCmd sets the move target of a partition still owned by Owner
// ("" Target cancels a move).
type SetTargetCmd struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Owner     string `json:"owner"`
	Target    string `json:"target"`
}

// FlipOwnerCmd makes To the owner, only if From still owns the partition
// and To is still its target (ErrConflict otherwise).
type FlipOwnerCmd struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// SetDrainingCmd marks a member as draining (decommission) or not.
type SetDrainingCmd struct {
	ID       string `json:"id"`
	Draining bool   `json:"draining"`
}

func (a *applyTx) assignment(topic string, p int) ([]Assignment, error) {
	if _, err := a.existingTopic(topic, ""); err != nil {
		return nil, err
	}
	as, err := a.assignments(topic)
	if err != nil {
		return nil, err
	}
	if p < 0 || p >= len(as) {
		return nil, topicErr(topic, ErrNotFound, "no partition %d", p)
	}
	return as, nil
}

func applySetTarget(a *applyTx, payload json.RawMessage) error {
	var c SetTargetCmd
	if err := decodePayload(OpSetTarget, payload, &c); err != nil {
		return err
	}
	as, err := a.assignment(c.Topic, c.Partition)
	if err != nil {
		return err
	}
	cur := &as[c.Partition]
	switch {
	case cur.Owner != c.Owner:
		return topicErr(c.Topic, ErrConflict, "partition %d is owned by %q, not %q", c.Partition, cur.Owner, c.Owner)
	case c.Target != "" && cur.Replicated():
		// Moving a replica is not built yet: the controller adds and
		// removes replicas instead (SetReplicas).
		return topicErr(c.Topic, ErrInvalid, "partition %d is replicated and does not move", c.Partition)
	case c.Target == cur.Owner && c.Target != "":
		return topicErr(c.Topic, ErrInvalid, "partition %d already lives on %q", c.Partition, c.Target)
	case cur.Target == c.Target:
		return nil
	}
	cur.Target = c.Target
	if err := a.putAssignments(c.Topic, as); err != nil {
		return err
	}
	a.bump(domAssignments)
	return nil
}

func applyFlipOwner(a *applyTx, payload json.RawMessage) error {
	var c FlipOwnerCmd
	if err := decodePayload(OpFlipOwner, payload, &c); err != nil {
		return err
	}
	as, err := a.assignment(c.Topic, c.Partition)
	if err != nil {
		return err
	}
	cur := &as[c.Partition]
	if cur.Owner != c.From || cur.Target != c.To || c.To == "" {
		return topicErr(c.Topic, ErrConflict, "partition %d: owner %q target %q, not %q -> %q",
			c.Partition, cur.Owner, cur.Target, c.From, c.To)
	}
	cur.Owner, cur.Target = c.To, ""
	if len(cur.Replicas) == 1 {
		// A single copy that was replicated once (its factor lowered to
		// 1) keeps its copy list naming its owner: a list naming the old
		// owner would make every later raise of the factor refused.
		cur.Replicas = []string{c.To}
		if len(cur.InSync) > 0 {
			cur.InSync = []string{c.To}
		}
	}
	if err := a.putAssignments(c.Topic, as); err != nil {
		return err
	}
	a.bump(domAssignments)
	return nil
}

func applySetDraining(a *applyTx, payload json.RawMessage) error {
	var c SetDrainingCmd
	if err := decodePayload(OpSetDraining, payload, &c); err != nil {
		return err
	}
	m, ok, err := a.member(c.ID)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("meta: member %q: %w", c.ID, ErrNotFound)
	}
	if m.Draining == c.Draining {
		return nil
	}
	m.Draining = c.Draining
	if err := a.putMember(m); err != nil {
		return err
	}
	a.bump(domHeartbeats) // a drain flag routes nothing: fan-out need not look
	return nil
}

// SetTarget sets or cancels (target "") a partition's move target.
func (s *Store) SetTarget(ctx context.Context, topic string, p int, owner, target string) error {
	return s.propose(ctx, OpSetTarget, SetTargetCmd{Topic: topic, Partition: p, Owner: owner, Target: target})
}

// FlipOwner completes a move: owner := to, if from still owns and to is
// still the target.
func (s *Store) FlipOwner(ctx context.Context, topic string, p int, from, to string) error {
	return s.propose(ctx, OpFlipOwner, FlipOwnerCmd{Topic: topic, Partition: p, From: from, To: to})
}

// SetDraining marks a member draining (decommission) or cancels it.
func (s *Store) SetDraining(ctx context.Context, id string, draining bool) error {
	return s.propose(ctx, OpSetDraining, SetDrainingCmd{ID: id, Draining: draining})
}

// ConfirmOwnerAsLeader answers, on the leader after a barrier, who owns a
// partition and where it is moving: what a node needs before deleting its
// copy of a partition it no longer owns.
func (s *Store) ConfirmOwnerAsLeader(ctx context.Context, topic string, p int) (owner, target string, err error) {
	if err := s.Barrier(ctx); err != nil {
		return "", "", fmt.Errorf("meta: confirm owner of %s/%d: %w: %w", topic, p, ErrNotConfirmed, err)
	}
	var as []Assignment
	var exists bool
	err = s.fsm.view(func(tx *bolt.Tx) error {
		var err error
		if _, exists, err = readTopic(tx, topic); err != nil || !exists {
			return err
		}
		as, err = readAssignments(tx, topic)
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("meta: confirm owner of %s/%d: %w: %w", topic, p, ErrNotConfirmed, err)
	}
	if !exists || p >= len(as) {
		return "", "", nil
	}
	return as[p].Owner, as[p].Target, nil
}

// ConfirmOwner is ConfirmOwnerAsLeader on the leader, wherever it is. Only
// a nil error is an answer; "" owner means no such partition.
func (s *Store) ConfirmOwner(ctx context.Context, topic string, p int) (owner, target string, err error) {
	if s.IsLeader() {
		return s.ConfirmOwnerAsLeader(ctx, topic, p)
	}
	err = s.askLeader(fmt.Sprintf("the owner of %s/%d", topic, p), func(c Confirmer, leader Member) (err error) {
		owner, target, err = c.ConfirmOwner(ctx, leader, topic, p)
		return err
	})
	if err != nil {
		return "", "", err
	}
	return owner, target, nil
}
