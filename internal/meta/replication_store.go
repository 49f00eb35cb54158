package meta

import (
	"context"
	"errors"
	"fmt"
)

// Forwarder sends an encoded command (Command.Encode) to the leader,
// whose node RPC handler gives it to ApplyForwarded. leader is the
// leader's member record as this replica knows it (as for Confirmer). A
// refusal should come back wrapping the outcome error (ErrConflict,
// ErrInvalid, ...) when the transport can carry it.
type Forwarder interface {
	Forward(ctx context.Context, leader Member, cmd []byte) error
}

// forwardable are the ops a node proposes on its own account wherever it
// runs (a partition leader is seldom the metastore leader); every other
// write reaches the leader through the HTTP forward or its own RPC.
var forwardable = map[Op]bool{OpSetInSync: true, OpStartEpoch: true, OpRenewEpoch: true}

// ApplyForwarded applies a command another node forwarded (Forwarder),
// on this node, which must lead: it never forwards again, so a command
// cannot bounce between nodes. Only replication's own writes are taken.
func (s *Store) ApplyForwarded(ctx context.Context, b []byte) error {
	cmd, err := DecodeCommand(b)
	if err != nil {
		return err
	}
	if !forwardable[cmd.Op] {
		return invalidf("%s is not a forwarded command", cmd.Op)
	}
	_, err = s.Apply(ctx, cmd)
	return err
}

// proposeAnywhere proposes here when this node leads, else forwards to
// the leader (Options.Forwarder).
func (s *Store) proposeAnywhere(ctx context.Context, op Op, payload any) error {
	cmd, err := NewCommand(op, payload)
	if err != nil {
		return err
	}
	_, err = s.Apply(ctx, cmd)
	if !errors.Is(err, ErrNotLeader) || s.opts.Forwarder == nil {
		return err
	}
	id, addr := s.Leader()
	if addr == "" {
		return err
	}
	leader, _ := s.Member(id)
	leader.ID, leader.RaftAddr = id, addr
	if ferr := s.opts.Forwarder.Forward(ctx, leader, cmd.Encode()); ferr != nil {
		return fmt.Errorf("meta: %s via leader %s: %w", op, id, ferr)
	}
	return nil
}

// SetInSync replaces a partition's in-sync set on the word of its leader
// (replica.Proposer), by the rule of SetInSyncCmd.Apply: ErrConflict
// unless c.Leader leads at c.Epoch and is in the set now, unless c.From is
// the set now, or when a member it adds lacks its recorded disk or an
// acknowledgement of the committed point; ErrInvalid unless c.InSync is
// distinct replicas holding the leader and, when smaller than now, at
// least a majority. Stored in replica order. Runs on any node: a follower
// forwards it to the leader.
func (s *Store) SetInSync(ctx context.Context, c SetInSyncCmd) error {
	return s.proposeAnywhere(ctx, OpSetInSync, c)
}

// StartEpoch records that the leader of epoch begins writing at offset
// (replica.Proposer). Refused (ErrConflict) unless leader leads at epoch,
// or when another offset is recorded for epoch (the same one again is a
// harmless retry). At most MaxEpochStarts are kept. Runs on any node.
func (s *Store) StartEpoch(ctx context.Context, topic string, partition int, epoch uint64, leader string, offset uint64) error {
	return s.proposeAnywhere(ctx, OpStartEpoch, StartEpochCmd{Topic: topic, Partition: partition, Epoch: epoch, Leader: leader, Offset: offset})
}

// RenewEpoch makes leader, which leads at epoch, the leader of epoch+1
// (RenewEpochCmd): a leader that may have written in epoch before, in an
// earlier process, never writes in it again. Refused (ErrConflict) unless
// leader leads at epoch and is in the in-sync set. Runs on any node.
func (s *Store) RenewEpoch(ctx context.Context, topic string, partition int, epoch uint64, leader string) error {
	return s.proposeAnywhere(ctx, OpRenewEpoch, RenewEpochCmd{Topic: topic, Partition: partition, Epoch: epoch, Leader: leader})
}

// ElectLeader makes to the leader of a replicated partition at epoch+1,
// if epoch is still current and to is in sync and not the leader already;
// the old leader leaves the in-sync set. The controller's (leader only).
func (s *Store) ElectLeader(ctx context.Context, topic string, partition int, epoch uint64, to string) error {
	return s.propose(ctx, OpElectLeader, ElectLeaderCmd{Topic: topic, Partition: partition, Epoch: epoch, To: to})
}

// SetReplicas replaces a partition's replicas at epoch (a single-copy
// partition is at epoch 0 and becomes epoch 1): the leader stays, new
// members join out of sync, and a change that would leave fewer in-sync
// members than before and than a majority is refused (ErrConflict).
// leaving names the copy being moved off, or none (leaving.go says when
// it must be named). The controller's (leader only).
func (s *Store) SetReplicas(ctx context.Context, topic string, partition int, epoch uint64, replicas []string, leaving string) error {
	return s.propose(ctx, OpSetReplicas, SetReplicasCmd{Topic: topic, Partition: partition, Epoch: epoch, Replicas: replicas,
		Leaving: leaving})
}
