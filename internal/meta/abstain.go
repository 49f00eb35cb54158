package meta

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// RequestPreVote RPCs are answered "not granted" before Raft sees them,
// and this node's own campaigns fail at its transport: hashicorp/raft
// counts a candidate's vote for itself without a message, so a wiped
// node that could campaign would still lend a forgetful vote — its own.
// The abstention is written down (AbstainFile, fsynced before Raft
// writes anything) and lasts across restarts: Raft has state of its own
// as soon as a leader wrote it a term, long before the node caught up.
// That record is an entry a leader appended after this node lost its
// state, and Raft's log matching puts every entry before it — every
// entry committed before the loss among them (a leader holds all of
// them) — in this node's log once it is applied here. From then on the
// node votes as Raft says; the abstention never comes back in this
// process.
//
// One exception lets a brand-new cluster form: every initial member
// starts empty, and a candidate whose log ends at the bootstrap
// configuration (index 1) is judged by Raft as usual. That is safe while
// no more than one copy fails at a time: a candidate at index 1 lacks
// every later committed entry, and it wins only with the vote of a voter
// holding none either — the entry's holders, a majority, would all have
// to be wiped or down, more than the one failure three voters tolerate.
// A cluster that loses its first leader before a member's disk is
// recorded (its first heartbeat, well under a second) waits for that
// member. A node that opened on its Raft state, with no abstention
// written down, never abstains.
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

// RequestVote asks a peer for its vote, unless this node abstains: then
// the campaign gets no vote but its own, and loses.
func (a *abstainTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	if a.abstain(args.LastLogIndex) {
		return errAbstaining
	}
	return a.NetworkTransport.RequestVote(id, target, args, resp)
}

// RequestPreVote is RequestVote's pre-vote: an abstaining node never
// passes one, so it never raises its term either.
func (a *abstainTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	if a.abstain(args.LastLogIndex) {
		return errAbstaining
	}
	return a.NetworkTransport.RequestPreVote(id, target, args, resp)
}

var errAbstaining = errors.New("meta: this node has no Raft state of its own yet recorded: it abstains from elections")

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

// AbstainFile, in the metastore directory, says that this node abstains
// (written before Raft state, removed once the disk is recorded).
const AbstainFile = "abstaining"

// abstention is a Store's state of the rule above: on at Open when Raft
// had no state or AbstainFile is there, off for good once the replica
// records this node's disk.
type abstention struct {
	on   atomic.Bool
	file string
	once sync.Once
}

// startAbstaining decides at Open whether this node abstains, and writes
// it down before Raft can write anything.
func (s *Store) startAbstaining(hasState bool) error {
	s.abstaining.file = filepath.Join(s.opts.Dir, AbstainFile)
	_, err := os.Stat(s.abstaining.file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		// Not "no marker": a node that lost its Raft state must not vote
		// on an incomplete log because its marker could not be read.
		return fmt.Errorf("meta: checking %s: %w", AbstainFile, err)
	}
	written := err == nil
	if s.opts.DiskID == "" || (hasState && !written) {
		return nil
	}
	if !written {
		if err := writeDurably(s.abstaining.file, []byte(s.opts.DiskID+"\n")); err != nil {
			return fmt.Errorf("meta: writing %s: %w", AbstainFile, err)
		}
	}
	s.abstaining.on.Store(true)
	// Said for the operator: on a first start this is expected, and
	// after a lost metastore directory it is what keeps the node from
	// electing a leader with a log that lacks committed entries.
	s.log.Info("metastore: this node has no recorded Raft history (a first start, or a lost metastore directory): it will not vote in leader elections until the cluster's leader records this disk, normally within seconds; nothing to do",
		"node", s.opts.NodeID, "disk_id", s.opts.DiskID, "state_on_disk", hasState)
	return nil
}

// writeDurably writes a new small file and fsyncs it and its directory.
func writeDurably(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// abstains reports whether a vote for a candidate whose log ends at
// lastLogIndex is refused now.
func (s *Store) abstains(lastLogIndex uint64) bool {
	if !s.abstaining.on.Load() || lastLogIndex <= bootstrapIndex {
		return false
	}
	if m, ok := s.Member(s.opts.NodeID); ok && s.opts.DiskID != "" && m.DiskID == s.opts.DiskID {
		s.abstaining.once.Do(func() {
			// Removed before votes resume: a restart after this finds
			// the record at once; a failed removal only makes the next
			// start abstain until it reads the record again.
			if err := os.Remove(s.abstaining.file); err == nil || errors.Is(err, os.ErrNotExist) {
				_ = syncDir(filepath.Dir(s.abstaining.file))
			}
			s.abstaining.on.Store(false)
			s.log.Info("metastore: the cluster has recorded this node's disk, and this node's log holds every committed entry: it votes in leader elections again",
				"node", s.opts.NodeID, "disk_id", s.opts.DiskID)
		})
		return false
	}
	return true
}
