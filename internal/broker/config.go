package broker

import (
	"log/slog"
	"time"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/journal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
)

// Config is what the broker needs from the node configuration.
type Config struct {
	DataDir string
	NodeID  string

	DefaultPartitions    int
	MaxPartitions        int
	DefaultRetentionMs   int64
	DefaultVisibilityMs  int64
	DefaultMaxInFlight   int
	DefaultMaxAckedAhead int

	SegmentBytes int64
	Codec        storage.Codec
	Level        string
	// SkipCorrupt opens partition logs past mid-segment damage, skipping
	// the damaged records (storage.skip_corrupt, an operator's decision).
	SkipCorrupt bool

	IdleEviction     time.Duration // 0 disables
	RetentionSweep   time.Duration // default 60 s
	FrontierPersist  time.Duration // default 100 ms
	ExpirySweep      time.Duration // default 1 s
	HWMPersistPeriod time.Duration // default 1 s
	MaxConsumeWait   time.Duration // default 10 s
	// MaxConsumeBytes caps the keys and payloads of one consume or replay
	// answer; one record is always delivered however large. Default 8 MiB.
	MaxConsumeBytes int
	// DedupeMaxIDs caps the msg ids one partition remembers for its
	// topic's dedupe window (package hosted); default hosted.DefaultMaxIDs.
	DedupeMaxIDs int
	Now          func() time.Time
	Logger       *slog.Logger
	// FS is the filesystem of the partition logs and their state files;
	// nil (production) is the real disk. Tests inject faults here.
	FS vfs.FS
	// Journal makes the writes of held logs (replicated partitions'
	// copies) durable with one fdatasync for all of them (package
	// journal); nil: each fdatasyncs its segment.
	Journal *journal.Journal
	// Admission, when set, may refuse a commit (a partition frozen for a
	// move, package move); nil admits every commit (move.go).
	Admission Admission
	// Disk, when set, says the data disk is full (its reserve released):
	// produce and topic create are refused so the room stays for deletes.
	Disk DiskGuard
	// Placer and RemoteStats are the cluster's: placement of new
	// partitions, and describing partitions other nodes own. Nil on a
	// single node (every partition here; no remote stats).
	Placer      Placer
	RemoteStats StatsFunc
	// LiveNodes is how many nodes may receive partitions now (the most
	// copies a replication_factor may ask for); nil: one, this node.
	LiveNodes func() int
	// Remote commits to partitions other nodes own (node RPC): where a
	// dead-letter copy goes when its partition is not served here. Nil on
	// a single node.
	Remote Committer
	// Replication runs the roles of the replicated partitions this node
	// holds a replica of (hosted.Roles); nil: none are hosted (a single
	// node, or tests), and such partitions are never ready here.
	// ReplayGate says which partitions still wait for their records from
	// this node's ingress WAL after a restart (dispatch.Dispatcher's
	// Replaying). Until it says no, commits that did not come from that WAL
	// (forwarded by other nodes, fan-out copies, reroutes) are refused as
	// temporarily unavailable: a power cut may have taken a lazily
	// committed tail readers saw, and the WAL must put it back at the same
	// offsets before anything else lands behind the flushed records. Nil:
	// no partition waits.
	ReplayGate func(topic string, partition int) bool
	// CursorCopies are the fan-out engine's cursor files, which a
	// replicated parent's leader sends its followers and a follower writes
	// (hosted.CursorCopies). Nil: none are copied.
	CursorCopies hosted.CursorCopies
	Replication  hosted.ReplicaEngine
	// Fenced says this node's lease has lapsed (its heartbeat was not
	// answered within FenceAfter): it serves no replicated partition
	// until it hears again. Nil: never fenced.
	Fenced func() bool
	// ReplicaCommitWait bounds how long a commit into a replicated
	// partition waits for the in-sync set to hold it before answering 503
	// (default 5 s).
	ReplicaCommitWait time.Duration
	// TakeoverWait bounds how long a commit into a replicated partition
	// this node was just made the leader of waits for the node to take
	// the leadership over, before answering 503 (hosted.Roles.
	// AwaitLeaderRole; default 2 s, negative: no wait).
	TakeoverWait time.Duration
	// LeaderChangeGrace is how long a commit forwarded to a replicated
	// partition's leader still waits for that leader's answer once this
	// node's metastore replica names another leader (untilLeaderChanges;
	// default 250 ms, negative: none).
	LeaderChangeGrace time.Duration
	// DeadLetterPass is how often held records are handed to their
	// dead-letter topics (default 100 ms).
	DeadLetterPass time.Duration
}

// DiskGuard is the data disk's reserve (package reserve).
type DiskGuard interface {
	Full() bool
	// Check re-reads free space now (after an ENOSPC).
	Check()
}

func (c *Config) withDefaults() {
	setDefault(&c.DefaultPartitions, 3)
	setDefault(&c.MaxPartitions, 108)
	setDefault(&c.DefaultRetentionMs, 7*24*3600*1000)
	setDefault(&c.DefaultVisibilityMs, 30_000)
	setDefault(&c.DefaultMaxInFlight, 1024)
	setDefault(&c.DefaultMaxAckedAhead, 1024)
	setDefault(&c.RetentionSweep, time.Minute)
	setDefault(&c.FrontierPersist, 100*time.Millisecond)
	setDefault(&c.ExpirySweep, time.Second)
	setDefault(&c.HWMPersistPeriod, time.Second)
	setDefault(&c.MaxConsumeWait, 10*time.Second)
	setDefault(&c.MaxConsumeBytes, 8<<20)
	setDefault(&c.DeadLetterPass, 100*time.Millisecond)
	setDefault(&c.ReplicaCommitWait, 5*time.Second)
	setDefault(&c.TakeoverWait, 2*time.Second)
	setDefault(&c.LeaderChangeGrace, 250*time.Millisecond)
	setDefault(&c.DedupeMaxIDs, hosted.DefaultMaxIDs)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v == 0 {
		*v = d
	}
}
