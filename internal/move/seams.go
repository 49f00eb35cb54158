package move

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// What this package needs of the others, declared here (the consumer's
// side) and implemented by them: the broker (Partitions), the metastore
// (Meta), node RPC (Remote; NodeRemote builds it on an RPC pool).

// Partitions is what a move needs of this node's data plane: the hosted
// partitions' files (hosted.Set) and the replication roles' word that
// none runs for a partition (the broker's WithoutReplica).
type Partitions interface {
	Files
	// WithoutReplica runs remove while no replication role for topic/p
	// runs on this node and none can start; refused (an error) when one
	// runs or the placement lists this node as a replica again.
	WithoutReplica(topic string, p int, remove func() error) error
}

// Files is where a partition's directory is, its log, and the queue state
// kept right around a copy (hosted.Set).
type Files interface {
	// Dir is topic/p's directory; it refuses a name that is not a valid
	// topic name, so no path built from it leaves the data directory.
	Dir(topic string, p int) (string, error)
	// Get opens topic/p's log (creating its directory if need be).
	Get(topic string, p int) (*storage.Log, error)
	// PartitionDirs lists the partition directories on this node by topic.
	PartitionDirs() (map[string][]int, error)
	// Options are the options logs open with here (FS included).
	Options() storage.Options
	// PersistFrontier writes topic/p's consumer frontier now, so that a
	// copy taken after it carries it.
	PersistFrontier(topic string, p int) error
	// Forget closes topic/p's log and drops its queue state: the
	// directory is about to be replaced or removed.
	Forget(topic string, p int)
}

// Meta is what a move needs of the metastore (*meta.Store).
type Meta interface {
	Topics() []meta.Topic
	Assignments(topic string) []meta.Assignment
	Owner(topic string, p int) (string, bool)
	// ConfirmOwner asks the leader (the barrier rule) who owns a partition
	// and where it moves; only a nil error is an answer.
	ConfirmOwner(ctx context.Context, topic string, p int) (owner, target string, err error)
	// CatchUp waits until this replica has applied every write the leader
	// acknowledged before the call (a read index); only a nil error is an
	// answer.
	CatchUp(ctx context.Context) error
	IsLeader() bool
	// FlipOwner completes a move (compare-and-swap), on the leader.
	FlipOwner(ctx context.Context, topic string, p int, from, to string) error
}

// Remote is what a session needs of other nodes: the source's side of the
// copy (Source, on the source node) and the flip on the leader.
type Remote interface {
	// MoveFreeze freezes topic/p on node for ttl on behalf of holder and
	// answers its high watermark; ttl 0 lifts holder's freeze.
	MoveFreeze(ctx context.Context, node, topic string, p int, ttl time.Duration, holder string) (uint64, error)
	MoveFiles(ctx context.Context, node, topic string, p int) ([]storage.PartitionFile, uint64, error)
	// MoveRead may answer fewer than n bytes; none only at the file's end.
	MoveRead(ctx context.Context, node, topic string, p int, name string, off, n int64) ([]byte, error)
	Flip(ctx context.Context, topic string, p int, from, to string) error
}

// InPlaceCheck tells a session whether a file it copied is one its owner
// rewrites in place (a fan-out cursor file: fanout.CopiedCursorFile) and,
// if so, whether the copy at path reads back whole; a copy that does not
// is fetched again. nil: no file is rewritten in place.
type InPlaceCheck func(name, path string) (inPlace bool, err error)

// Gauge and Counter are the two metrics the worker reports
// (narad_moves_in_flight, narad_moves_completed_total).
type (
	Gauge   interface{ Set(float64) }
	Counter interface{ Inc() }
)
