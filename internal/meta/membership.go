package meta

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Server is a Raft voter: a node id and the Raft address peers dial.
type Server struct {
	ID   string
	Addr string
}

func inServers(ss []Server, id string) bool {
	for _, s := range ss {
		if s.ID == id {
			return true
		}
	}
	return false
}

// Servers lists the voters of the current Raft configuration.
func (s *Store) Servers() ([]Server, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	var out []Server
	for _, sv := range f.Configuration().Servers {
		out = append(out, Server{ID: string(sv.ID), Addr: string(sv.Address)})
	}
	return out, nil
}

// Admitted reports whether this node is in the Raft configuration and
// knows a leader: admission is proved by its own Raft.
func (s *Store) Admitted() bool {
	servers, err := s.Servers()
	if err != nil {
		return false
	}
	id, _ := s.Leader()
	return id != "" && inServers(servers, s.opts.NodeID)
}

// AddVoter admits a node (idempotent: a voter already present at the same
// address is a no-op). Only the leader may.
func (s *Store) AddVoter(ctx context.Context, id, addr string) error {
	if !s.IsLeader() {
		return s.notLeader()
	}
	servers, err := s.Servers()
	if err != nil {
		return err
	}
	for _, sv := range servers {
		if sv.ID == id && sv.Addr == addr {
			return nil
		}
	}
	timeout := 10 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	if err := s.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, timeout).Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) {
			return s.notLeader()
		}
		return fmt.Errorf("meta: add voter %s at %s: %w", id, addr, err)
	}
	s.log.Info("metastore: admitted a voter", "node", id, "addr", addr)
	return nil
}

// RemoveServer removes a node from the Raft configuration. Only the leader
// may.
func (s *Store) RemoveServer(ctx context.Context, id string) error {
	if !s.IsLeader() {
		return s.notLeader()
	}
	if err := s.raft.RemoveServer(raft.ServerID(id), 0, 10*time.Second).Error(); err != nil {
		return fmt.Errorf("meta: remove server %s: %w", id, err)
	}
	return nil
}

// TransferLeadership hands leadership to another voter before a graceful
// shutdown, so the cluster does not wait out an election timeout. A
// follower or a lone voter has nothing to transfer.
func (s *Store) TransferLeadership() error {
	if !s.IsLeader() {
		return nil
	}
	servers, err := s.Servers()
	if err != nil || len(servers) < 2 {
		return err
	}
	return s.raft.LeadershipTransfer().Error()
}
