package meta

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/narad-io/narad/internal/clustertls"
	"github.com/narad-io/narad/internal/peerauth"
	bolt "go.etcd.io/bbolt"
)

// File names under Options.Dir (see the package doc).
const (
	raftDBFile = "raft.db"
	fsmDBFile  = "fsm.db"
	// snapshotsRetained is how many file snapshots Raft keeps in
	// <dir>/snapshots (the directory name is the snapshot store's own).
	snapshotsRetained = 2
)

// Options configure Open. Dir, NodeID and BindAddr are required.
type Options struct {
	Dir    string // data directory (raft.db, snapshots/, fsm.db)
	NodeID string // this node's Raft server ID, stable across restarts

	// BindAddr is the cluster address Raft's TCP transport listens on,
	// e.g. "127.0.0.1:7943". Port 0 picks a free port; the transport then
	// advertises the port it got (RaftAddr reports it). Note that the
	// address is recorded in the Raft configuration at bootstrap, so a
	// node must come back on the same address.
	BindAddr string
	// TLS, when set, runs Raft over mutual TLS (docs/security.md, "Mutual TLS
	// between nodes").
	TLS *clustertls.Config
	// Secret keys the handshake every Raft connection runs before Raft
	// reads a byte of it (package peerauth). Empty: a key of this
	// process only, so no other node can connect — right for a node with
	// no peers; a cluster's nodes share NARAD_CLUSTER_SECRET.
	Secret []byte
	// StreamRefused, if set, is told the reason of every refused incoming
	// Raft connection (for the metric).
	StreamRefused func(reason string)
	// Advertise is the address peers dial, when it differs from BindAddr
	// (BindAddr on 0.0.0.0, or behind NAT). Must be a concrete host:port.
	Advertise string

	// DiskID is the id of the data directory this node runs on
	// (datadir.Disk). A node that opens with no Raft state abstains from
	// elections until its replica records this disk for it (abstain.go);
	// empty: no abstention (tests, and nodes from before disk ids).
	DiskID string

	// Bootstrap: no peers are configured, so a node whose disk is empty
	// bootstraps a one-member cluster of itself. Ignored when the disk
	// holds Raft state. Without it an empty node waits to be added.
	Bootstrap bool
	// InitialServers, when set, are the members allowed to bootstrap a
	// brand-new cluster (cluster.initial_members with their addresses from
	// cluster.peers). Every listed node bootstraps the same configuration,
	// so the bootstrap converges; a node not in the list never bootstraps
	// and waits to be added (join). Consulted only on an empty disk.
	InitialServers []Server

	Logger *slog.Logger // our logs; nil discards
	// RaftLogOutput, if set, receives hashicorp/raft's own log lines in
	// hclog's format; nil routes them into Logger. RaftLogLevel filters
	// them ("warn" when empty).
	RaftLogOutput io.Writer
	RaftLogLevel  string

	// Raft timings. Zero picks the defaults: 500 ms / 500 ms / 250 ms,
	// so leadership comes within about a second (withDefaults).
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// Snapshot cadence; zero keeps hashicorp/raft's defaults (every 120 s
	// if 8192 entries accumulated; 10240 entries kept after a snapshot).
	SnapshotInterval  time.Duration
	SnapshotThreshold uint64
	TrailingLogs      uint64

	// ApplyTimeout bounds a write whose context has no deadline. Zero: 30 s.
	ApplyTimeout time.Duration

	// Confirmer answers leader confirmations when this node is not the
	// leader (see ConfirmTopic); nil on a node that always leads alone.
	Confirmer Confirmer
	// Forwarder carries the writes a node makes on its own account while
	// another node leads (SetInSync, StartEpoch) to the leader; nil: such
	// a write on a follower answers *NotLeaderError.
	Forwarder Forwarder
}

// Store is a node's handle on the metastore: the Raft node, its stores and
// transport, and the FSM.
type Store struct {
	opts     Options
	log      *slog.Logger
	raft     *raft.Raft
	trans    *raft.NetworkTransport
	votes    *abstainTransport // trans as Raft sees it (abstain.go)
	logStore *raftboltdb.BoltStore
	fsm      *fsm

	abstaining abstention // abstain.go
	futures    futureWaits

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool
}

// Open opens (or creates) the metastore in opts.Dir and starts Raft. With
// opts.Bootstrap and an empty disk it bootstraps a one-member cluster; use
// WaitLeader to wait for the election.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" || opts.NodeID == "" || opts.BindAddr == "" {
		return nil, errors.New("meta: open: Dir, NodeID and BindAddr are required")
	}
	opts = withDefaults(opts)
	s := &Store{opts: opts, log: opts.Logger}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("meta: open: %w", err)
	}
	hlog := newRaftLogger(opts.RaftLogOutput, opts.RaftLogLevel, s.log)

	var err error
	cleanup := func() {
		if s.trans != nil {
			_ = s.trans.Close()
		}
		if s.fsm != nil {
			_ = s.fsm.close()
		}
		if s.logStore != nil {
			_ = s.logStore.Close()
		}
	}
	s.logStore, err = raftboltdb.New(raftboltdb.Options{
		Path:        filepath.Join(opts.Dir, raftDBFile),
		BoltOptions: &bolt.Options{Timeout: time.Second},
	})
	if err != nil {
		return nil, fmt.Errorf("meta: open %s: %w", raftDBFile, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(opts.Dir, snapshotsRetained, hlog.Named("snapshots"))
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("meta: open snapshots: %w", err)
	}
	hasState, err := raft.HasExistingState(s.logStore, s.logStore, snaps)
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("meta: open: %w", err)
	}
	s.fsm, err = openFSM(filepath.Join(opts.Dir, fsmDBFile), s.log)
	if err != nil {
		cleanup()
		return nil, err
	}
	if err := s.prepareFSM(hasState, snaps); err != nil {
		cleanup()
		return nil, err
	}

	var advertise net.Addr
	if opts.Advertise != "" {
		if advertise, err = net.ResolveTCPAddr("tcp", opts.Advertise); err != nil {
			cleanup()
			return nil, fmt.Errorf("meta: advertise address %q: %w", opts.Advertise, err)
		}
	}
	door := peerauth.Config{Plane: "raft", Secret: opts.Secret, Refused: opts.StreamRefused, Logger: s.log}
	if opts.TLS != nil {
		door.TLSServer, door.TLSClient = opts.TLS.Server, opts.TLS.Client
	}
	stream, err := peerauth.ListenRaft(opts.BindAddr, advertise, door)
	if err == nil {
		s.trans = raft.NewNetworkTransportWithLogger(stream, 3, 10*time.Second, hlog.Named("transport"))
	}
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("meta: listen %s: %w", opts.BindAddr, err)
	}

	// With no Raft state (or an abstention written down) and a disk id to
	// recognise, this node abstains from elections until its replica
	// records its disk (abstain.go).
	if err := s.startAbstaining(hasState); err != nil {
		s.trans.Close()
		s.trans = nil
		cleanup()
		return nil, err
	}
	self := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(opts.NodeID),
		Addr: s.trans.EncodePeer(raft.ServerID(opts.NodeID), s.trans.LocalAddr())}
	s.votes = newAbstainTransport(s.trans, self, s.abstains)
	s.raft, err = raft.NewRaft(s.raftConfig(hlog), s.fsm, s.logStore, s.logStore, snaps, s.votes)
	if err != nil {
		_ = s.votes.Close()
		s.trans = nil
		cleanup()
		return nil, fmt.Errorf("meta: start raft: %w", err)
	}
	if !hasState && len(opts.InitialServers) > 0 && inServers(opts.InitialServers, opts.NodeID) {
		cfg := raft.Configuration{}
		for _, sv := range opts.InitialServers {
			cfg.Servers = append(cfg.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(sv.ID), Address: raft.ServerAddress(sv.Addr)})
		}
		if err := s.raft.BootstrapCluster(cfg).Error(); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("meta: bootstrap: %w", err)
		}
		s.log.Info("metastore: bootstrapped the initial members", "node", opts.NodeID, "members", len(cfg.Servers))
	} else if opts.Bootstrap && !hasState {
		cfg := raft.Configuration{Servers: []raft.Server{{
			Suffrage: raft.Voter,
			ID:       raft.ServerID(opts.NodeID),
			Address:  s.trans.LocalAddr(),
		}}}
		if err := s.raft.BootstrapCluster(cfg).Error(); err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("meta: bootstrap: %w", err)
		}
		s.log.Info("metastore: bootstrapped a one-member cluster", "node", opts.NodeID, "addr", s.trans.LocalAddr())
	}
	return s, nil
}

// prepareFSM reconciles fsm.db with Raft's state before Raft starts (Raft
// itself is told not to restore a snapshot on start: fsm.db usually is
// newer than any snapshot).
func (s *Store) prepareFSM(hasState bool, snaps raft.SnapshotStore) error {
	if !hasState {
		if s.fsm.state.Load().applied != 0 {
			s.log.Warn("metastore: discarding fsm.db without Raft state", "dir", s.opts.Dir)
		}
		return s.fsm.reset()
	}
	list, err := snaps.List()
	if err != nil {
		return fmt.Errorf("meta: list snapshots: %w", err)
	}
	if len(list) == 0 {
		return nil // the whole log is still there; Raft replays what is missing
	}
	newest := list[0]
	if s.fsm.state.Load().applied >= newest.Index {
		return nil
	}
	// fsm.db is missing or older than the newest snapshot, and the log
	// before that snapshot may be compacted away: start from the snapshot.
	_, rc, err := snaps.Open(newest.ID)
	if err != nil {
		return fmt.Errorf("meta: open snapshot %s: %w", newest.ID, err)
	}
	s.log.Info("metastore: restoring fsm.db from snapshot", "snapshot", newest.ID)
	return s.fsm.Restore(rc)
}

func withDefaults(o Options) Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// 500 ms / 500 ms / 250 ms, half hashicorp/raft's defaults: a dead
	// metastore leader is replaced within about a second, which bounds a
	// replicated partition's failover when that node led it too (the
	// controller's 2.5 s count only starts after the election). The
	// leader heartbeats its followers every 50 ms (a tenth of the
	// timeout), so a follower calls an election only after ten missed.
	hb, el, lease := 500*time.Millisecond, 500*time.Millisecond, 250*time.Millisecond
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = hb
	}
	if o.ElectionTimeout == 0 {
		o.ElectionTimeout = max(el, o.HeartbeatTimeout)
	}
	if o.LeaderLeaseTimeout == 0 {
		o.LeaderLeaseTimeout = min(lease, o.HeartbeatTimeout)
	}
	if o.ApplyTimeout == 0 {
		o.ApplyTimeout = 30 * time.Second
	}
	return o
}

func (s *Store) raftConfig(hlog hclog.Logger) *raft.Config {
	c := raft.DefaultConfig()
	c.Logger = hlog
	c.LocalID = raft.ServerID(s.opts.NodeID)
	c.HeartbeatTimeout = s.opts.HeartbeatTimeout
	c.ElectionTimeout = s.opts.ElectionTimeout
	c.LeaderLeaseTimeout = s.opts.LeaderLeaseTimeout
	if s.opts.SnapshotInterval > 0 {
		c.SnapshotInterval = s.opts.SnapshotInterval
	}
	if s.opts.SnapshotThreshold > 0 {
		c.SnapshotThreshold = s.opts.SnapshotThreshold
	}
	if s.opts.TrailingLogs > 0 {
		c.TrailingLogs = s.opts.TrailingLogs
	}
	// fsm.db survives restarts and knows its applied index; restoring the
	// last snapshot over it would only move it backwards (prepareFSM
	// restores when fsm.db is behind).
	c.NoSnapshotRestoreOnStart = true
	c.NoLegacyTelemetry = true
	return c
}

// Close shuts Raft down and closes the transport and both databases. It does
// not transfer leadership (the cluster layer does that first).
// Safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		var errs []error
		if !s.futures.stop(futureWaitsBound) {
			s.log.Warn("meta: closing with Raft futures still unresolved", "waited", futureWaitsBound)
		}
		if s.raft != nil {
			errs = append(errs, s.raft.Shutdown().Error())
		}
		// Close the pooled outbound connections too: Close alone leaves
		// them open, and each keeps a peer's handler goroutine reading.
		s.trans.CloseStreams()
		errs = append(errs, s.votes.Close(), s.logStore.Close(), s.fsm.close())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// NodeID is this node's Raft server ID.
func (s *Store) NodeID() string { return s.opts.NodeID }

// RaftAddr is the address the Raft transport advertises (the real port when
// BindAddr asked for port 0).
func (s *Store) RaftAddr() string { return string(s.trans.LocalAddr()) }

// Snapshot asks Raft to take a snapshot now (compacting the log). Raft
// refuses when nothing was applied since the last one.
func (s *Store) Snapshot() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.raft.Snapshot().Error()
}

// Versions returns the domain version counters of the local replica.
func (s *Store) Versions() Versions { return s.fsm.state.Load().v }

// LatestDomainVersion is Versions().LatestDomain(): it ignores heartbeats
// and drain flags.
func (s *Store) LatestDomainVersion() uint64 { return s.fsm.state.Load().v.LatestDomain() }

// TopicsVersion is the topics domain version.
func (s *Store) TopicsVersion() uint64 { return s.fsm.state.Load().v.Topics }

// Watch returns a channel closed at the next change to the local replica
// (an applied command or a restore). Call it again for the change after.
func (s *Store) Watch() <-chan struct{} { return *s.fsm.watch.Load() }
