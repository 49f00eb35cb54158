package meta

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Confirmer asks a remote leader for a leader confirmation. The cluster
// layer implements it with the node RPC, whose server side calls the
// AsLeader methods on the leader. leader is the leader's member record as
// this replica knows it: ID and RaftAddr always, its node-RPC address once
// the leader has recorded itself. It is given at Open (Options.Confirmer)
// and never changes: a confirmer needs the RPC pool, not the store, so it
// can be built first.
type Confirmer interface {
	ConfirmTopic(ctx context.Context, leader Member, name, epoch string) (exists, epochCurrent bool, err error)
	ConfirmOwner(ctx context.Context, leader Member, topic string, partition int) (owner, target string, err error)
	// ReadIndex asks the leader for ReadIndexAsLeader.
	ReadIndex(ctx context.Context, leader Member) (uint64, error)
	// TopicIncarnation asks whether topic name exists and its incarnation
	// (0 from a leader that predates incarnations).
	TopicIncarnation(ctx context.Context, leader Member, name string) (exists bool, incarnation uint64, err error)
}

// ConfirmTopic asks the leader whether topic name exists and, when epoch is
// non-empty, whether epoch is its current attach epoch. Only a nil error is
// a definitive answer that may authorise destroying data; any error wraps
// ErrNotConfirmed and means "keep the data, ask again later".
//
// On the leader itself it passes a barrier and re-reads the database
// (barrier rule); elsewhere it asks the leader through the Confirmer.
func (s *Store) ConfirmTopic(ctx context.Context, name, epoch string) (exists, epochCurrent bool, err error) {
	if s.IsLeader() {
		return s.ConfirmTopicAsLeader(ctx, name, epoch)
	}
	err = s.askLeader(fmt.Sprintf("topic %q", name), func(c Confirmer, leader Member) (err error) {
		exists, epochCurrent, err = c.ConfirmTopic(ctx, leader, name, epoch)
		return err
	})
	if err != nil {
		return false, false, err
	}
	return exists, epochCurrent, nil
}

// askLeader runs a confirmation on the remote leader through the
// Confirmer. Any failure wraps ErrNotConfirmed: it is not an answer.
func (s *Store) askLeader(what string, ask func(c Confirmer, leader Member) error) error {
	if s.opts.Confirmer == nil {
		return fmt.Errorf("meta: confirm %s: %w: not the leader and no confirmer", what, ErrNotConfirmed)
	}
	id, addr := s.Leader()
	if addr == "" {
		return fmt.Errorf("meta: confirm %s: %w: no leader known", what, ErrNotConfirmed)
	}
	leader, _ := s.Member(id) // its addresses, when it has recorded itself
	leader.ID, leader.RaftAddr = id, addr
	if err := ask(s.opts.Confirmer, leader); err != nil {
		return fmt.Errorf("meta: confirm %s with %s: %w: %w", what, id, ErrNotConfirmed, err)
	}
	return nil
}

// ConfirmTopicAsLeader answers a confirmation on this node, which must be
// the leader: barrier, then a fresh read of fsm.db (not the cache). It never
// forwards, so a confirmation RPC cannot bounce between nodes.
func (s *Store) ConfirmTopicAsLeader(ctx context.Context, name, epoch string) (exists, epochCurrent bool, err error) {
	exists, epochCurrent, _, err = s.ConfirmTopicIncarnationAsLeader(ctx, name, epoch)
	return exists, epochCurrent, err
}

// ConfirmTopicIncarnationAsLeader is ConfirmTopicAsLeader that also
// reports the topic's incarnation (when it exists), from the same read.
func (s *Store) ConfirmTopicIncarnationAsLeader(ctx context.Context, name, epoch string) (exists, epochCurrent bool, incarnation uint64, err error) {
	if err := s.Barrier(ctx); err != nil {
		return false, false, 0, fmt.Errorf("meta: confirm topic %q: %w: %w", name, ErrNotConfirmed, err)
	}
	var t Topic
	err = s.fsm.view(func(tx *bolt.Tx) error {
		var err error
		t, exists, err = readTopic(tx, name)
		return err
	})
	if err != nil {
		return false, false, 0, fmt.Errorf("meta: confirm topic %q: %w: %w", name, ErrNotConfirmed, err)
	}
	return exists, exists && epoch != "" && t.AttachEpoch == epoch, t.Incarnation, nil
}

// ConfirmIncarnationGone asks the leader whether incarnation inc of topic
// name is no longer its current one: the topic is gone, or was re-created
// (a different, known incarnation). Only a nil error with gone true may
// authorise discarding records of that incarnation; an incarnation the
// leader cannot tell (0, a topic or a leader older than incarnations) is
// never gone while the name exists.
func (s *Store) ConfirmIncarnationGone(ctx context.Context, name string, inc uint64) (gone bool, err error) {
	var (
		exists bool
		cur    uint64
	)
	if s.IsLeader() {
		exists, _, cur, err = s.ConfirmTopicIncarnationAsLeader(ctx, name, "")
	} else {
		err = s.askLeader(fmt.Sprintf("topic %q", name), func(c Confirmer, leader Member) (err error) {
			exists, cur, err = c.TopicIncarnation(ctx, leader, name)
			return err
		})
	}
	if err != nil {
		return false, err
	}
	return !exists || (inc != 0 && cur != 0 && cur != inc), nil
}
