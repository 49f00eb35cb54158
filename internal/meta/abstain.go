package meta

import (
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// A node that starts with no Raft state of its own abstains from
// elections until its log provably holds everything committed before it
// lost that state.
//
// Raft's safety assumes a voter's log and vote survive restarts. A node
// whose data directory was wiped (a lost or replaced disk) comes back
// under the same Raft id with an empty log and no memory of its votes:
// as a voter it would grant its vote to any candidate, and a candidate
// that lacks a committed entry could then win with the votes of the
// wiped node and its own, and overwrite that entry on the copy that
// held it (3 voters: A and C hold entry e, committed; C is wiped; with A
// down, B — without e — wins with C's vote).
//
// So until this node's own metastore replica records the disk it runs
// on (Options.DiskID; the leader records a node's new disk when it first
// hears from it, meta.ReplaceDisk), incoming RequestVote and
// RequestPreVote RPCs are answered "not granted" before Raft sees them.
// That record is an entry a leader appended after this node lost its
// state, and Raft's log matching puts every entry before it — every
// entry committed before the loss among them (a leader holds all of
// them) — in this node's log once it is applied here. From then on the
// node votes as Raft says; the abstention never comes back in this
// process.
//
// One exception lets a brand-new cluster form: every initial member
// starts empty, and a candidate whose log ends at the bootstrap
// configuration (index 1) is judged by Raft as usual — no entry beyond
// the configuration can have been committed by then. A cluster that
// loses its first leader before a member's disk is recorded waits for
// that member. A node that still has its Raft state never abstains.
type abstainTransport struct {
	*raft.NetworkTransport
	self    raft.RPCHeader
	abstain func(lastLogIndex uint64) bool // true: answer "not granted"

	rpcs chan raft.RPC
	stop chan struct{}
	once sync.Once
	done chan struct{}
}

// bootstrapIndex is where hashicorp/raft's BootstrapCluster writes the
// first configuration.
const bootstrapIndex = 1

func newAbstainTransport(t *raft.NetworkTransport, self raft.RPCHeader, abstain func(uint64) bool) *abstainTransport {
	a := &abstainTransport{NetworkTransport: t, self: self, abstain: abstain,
		rpcs: make(chan raft.RPC), stop: make(chan struct{}), done: make(chan struct{})}
	go a.forward()
	return a
}

// Consumer is what Raft reads RPCs from: the transport's, less the votes
// this node abstains from.
func (a *abstainTransport) Consumer() <-chan raft.RPC { return a.rpcs }

func (a *abstainTransport) forward() {
	defer close(a.done)
	in := a.NetworkTransport.Consumer()
	for {
		var rpc raft.RPC
		select {
		case rpc = <-in:
		case <-a.stop:
			return
		}
		if a.refuse(rpc) {
			continue
		}
		select {
		case a.rpcs <- rpc:
		case <-a.stop:
			rpc.Respond(nil, raft.ErrTransportShutdown)
			return
		}
	}
}

// refuse answers a vote this node abstains from; it reports whether it
// did.
func (a *abstainTransport) refuse(rpc raft.RPC) bool {
	switch req := rpc.Command.(type) {
	case *raft.RequestVoteRequest:
		if a.abstain(req.LastLogIndex) {
			rpc.Respond(&raft.RequestVoteResponse{RPCHeader: a.self, Term: req.Term, Granted: false}, nil)
			return true
		}
	case *raft.RequestPreVoteRequest:
		if a.abstain(req.LastLogIndex) {
			rpc.Respond(&raft.RequestPreVoteResponse{RPCHeader: a.self, Term: req.Term, Granted: false}, nil)
			return true
		}
	}
	return false
}

// Close closes the transport and stops forwarding.
func (a *abstainTransport) Close() error {
	err := a.NetworkTransport.Close()
	a.once.Do(func() { close(a.stop) })
	<-a.done
	return err
}

// abstention is a Store's state of the rule above: set at Open when
// Raft had no state, cleared for good once the replica records this
// node's disk.
type abstention struct {
	on     atomic.Bool
	logged sync.Once
}

// abstains reports whether a vote for a candidate whose log ends at
// lastLogIndex is refused now.
func (s *Store) abstains(lastLogIndex uint64) bool {
	if !s.abstaining.on.Load() || lastLogIndex <= bootstrapIndex {
		return false
	}
	if m, ok := s.Member(s.opts.NodeID); ok && s.opts.DiskID != "" && m.DiskID == s.opts.DiskID {
		s.abstaining.on.Store(false)
		s.abstaining.logged.Do(func() {
			s.log.Info("metastore: this node's disk is recorded in its replica, which holds every entry committed before its Raft state was lost: it votes again",
				"node", s.opts.NodeID, "disk_id", s.opts.DiskID)
		})
		return false
	}
	return true
}
