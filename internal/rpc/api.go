package rpc

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// Per-call timeouts. The client applies them with
// context.WithTimeout, so a caller's earlier deadline always wins.
const (
	// DefaultTimeout bounds every call without a longer budget of its own.
	DefaultTimeout = 5 * time.Second
	// CommitTimeout is longer because a slow fsync is not a dead node:
	// timing out a commit that is merely slow makes dispatch re-commit it
	// (duplicates) or reroute it for nothing.
	CommitTimeout = 30 * time.Second
	// ForwardTimeout caps a metadata write forwarded to the leader: a
	// forwarded topic create may legitimately take this long there. A
	// forwarded data-plane request (consume, ack, replay) has the default
	// timeout plus its long-poll wait instead (ForwardRequest.Timeout), so
	// a frozen owner costs its client a 503 well within the HTTP write
	// timeout, not a connection closed with no answer.
	ForwardTimeout = 75 * time.Second
)

// MaxMessageBytes bounds a message in either direction, on both sides: a
// 16 MiB produce batch or a 4 MiB fan-out slab plus framing fits well under
// it, while a runaway message still cannot exhaust memory.
const MaxMessageBytes = 64 << 20

// unreachableRetry is the Retry-After of a 503 for a node that could not be
// reached: the reconnect backoff is capped at the same value, so a retry
// after it meets a fresh connection attempt.
const unreachableRetry = time.Second

// Handler is the serving side of node RPC, implemented by an adapter over
// the broker and the metastore. Methods return apierr values for refusals
// the client must see verbatim; any other error is an internal failure and
// reaches the caller as a bare 500 (the detail is logged where it happened).
type Handler interface {
	// Commit commits recs to a partition this node owns. Only Key and
	// Payload are meaningful; the commit stamps offsets and times.
	// metaVersion is the sender's metastore version (0: unknown); the
	// handler first lets its own replica catch up to it. incarnation, when
	// not 0, is the topic incarnation the records belong to.
	Commit(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record, metaVersion uint64) error
	// Forward replays a client-API request as if it had arrived here.
	Forward(ctx context.Context, req ForwardRequest) (ForwardResponse, error)
	// Stats describes partitions of topic without opening their logs —
	// unless exact, when a log whose directory cannot give its tail
	// exactly is opened to read it (an attach point).
	Stats(ctx context.Context, topic string, partitions []int, exact bool) ([]PartitionStats, error)
	// ConfirmTopic is leader confirmation: only a nil error is an answer.
	// incarnation is the topic's (when it exists).
	ConfirmTopic(ctx context.Context, name, epoch string) (exists, epochCurrent bool, incarnation uint64, err error)
	// Join asks this node to admit m; a non-leader names the leader.
	Join(ctx context.Context, m Member) (JoinResult, error)
	// Heartbeat records that m is alive, and which leaders of the
	// partitions m follows its fetches have not reached (none from a
	// node before the report).
	Heartbeat(ctx context.Context, m Member, unreachable []UnreachableLeader) error
	// Wait parks until topic's broadcast fires on this node (a commit, a
	// lease expiry or a nack on a partition it serves) or wait ends, and
	// reports whether it was woken. It leases nothing, so the caller may
	// abandon it at any time: the cross-node half of a long-poll.
	Wait(ctx context.Context, topic string, wait time.Duration) (woken bool, err error)
	// ConfirmOwner is leader confirmation of a partition's owner and target.
	ConfirmOwner(ctx context.Context, topic string, partition int) (owner, target string, err error)
	// Flip completes a move on the leader (compare-and-swap).
	Flip(ctx context.Context, topic string, partition int, from, to string) error
	// The move copy session, on the source: freeze (ttl 0 lifts it), list
	// the partition directory's files, read one.
	MoveFreeze(ctx context.Context, topic string, partition int, ttl time.Duration, holder string) (hwm uint64, err error)
	MoveFiles(ctx context.Context, topic string, partition int) ([]MoveFile, uint64, error)
	MoveRead(ctx context.Context, topic string, partition int, name string, offset, length int64) ([]byte, error)
	// ReadIndex, on the leader: a metastore version covering every write
	// acknowledged before the call (meta.Store.ReadIndexAsLeader).
	ReadIndex(ctx context.Context) (uint64, error)
	// Fetch serves a follower's fetch of a replicated partition this node
	// leads (fetch.go): records from req.Offset, waiting up to req.Wait
	// when there are none yet. Refusals are typed (refusal: stale epoch,
	// not leader, not ready), so the follower classifies them.
	Fetch(ctx context.Context, req FetchRequest) (FetchResponse, error)
	// Propose applies a metastore command another node forwarded (its
	// own replication write), on the metastore leader only.
	Propose(ctx context.Context, cmd []byte) error
}

// MoveFile is one file of a partition directory, as the source lists it
// for a copy (the storage type: node RPC carries it unchanged).
type MoveFile = storage.PartitionFile

// MaxMoveRead bounds one MoveRead answer.
const MaxMoveRead = 4 << 20

// ForwardRequest is a client-API HTTP request to replay on another node.
type ForwardRequest struct {
	Method      string
	Path        string
	RawQuery    string
	Body        []byte
	ContentType string
	// User was authenticated and authorised by the forwarding node; the
	// serving node trusts it because the caller proved the cluster secret.
	User string
	// Timeout is the call's budget, on the calling side only (it does not
	// travel; gRPC carries the deadline): 0 means DefaultTimeout.
	Timeout time.Duration
}

// ForwardResponse is the replayed request's answer, ready to be written to
// the client by the forwarding node. Only the headers the client API uses
// travel: Content-Type, and Retry-After (with a 503).
type ForwardResponse struct {
	Status      int
	ContentType string
	Body        []byte
	RetryAfter  time.Duration
	MetaVersion uint64 // the serving node's metastore version after the request
}

// PartitionStats describes one partition as its owner sees it.
type PartitionStats struct {
	Partition        int
	Available        bool
	Segments         int
	OldestOffset     uint64
	HighWatermark    uint64
	SizeBytes        int64
	OldestSegmentAt  int64 // as storage reports it; 0 when empty
	ConsumerFrontier uint64
	Exact            bool // false: HighWatermark may lag (storage.Stats.Exact)
	Cursors          []CursorPosition
	InFlight         int // live leases in the owner's lease table
	// OldestUnconsumedAt is the commit time (unix ms) of the record at
	// the consumer frontier; 0: none unconsumed, or the log is closed.
	OldestUnconsumedAt int64
	// CommitStall is why a replicated partition's leader cannot commit
	// ("" when it can).
	CommitStall string
}

// CursorPosition is a fan-out cursor on the parent partition: where the
// link to Child (at attach Epoch) will copy from next.
type CursorPosition struct {
	Child      string
	Epoch      string
	NextOffset uint64
	State      string // remote children: link state ("" before a send)
	AckedAtMs  int64  // remote children: commit time of the last acknowledged record
	// Remote children: why the link is not running, and the parent offset
	// of the record the target rejects (state "rejected" only).
	StateReason    string
	RejectedOffset *uint64
}

// Member is a node's addresses, as it announces them.
type Member struct {
	ID       string
	RaftAddr string
	RPCAddr  string
	HTTPAddr string
	DiskID   string // its data directory's disk id (meta.Member.DiskID)
	// Network is the sender's cluster.network; "" from a node before the
	// setting (it runs lan's timings).
	Network string
}

// UnreachableLeader is a follower's report, carried by its node's
// heartbeat, that its fetches have not reached the partition's leader
// for For (up to the heartbeat's sending).
type UnreachableLeader struct {
	Topic       string
	Partition   int
	Leader      string
	LeaderEpoch uint64
	For         time.Duration
}

// JoinResult answers a join. Not admitted with a leader named means "ask
// there"; not admitted without one means "no leader yet, ask again later".
type JoinResult struct {
	Admitted      bool
	LeaderID      string
	LeaderRPCAddr string
}
