// Package route answers "who owns topic/partition, and commit there": the
// one commit seam that produce dispatch and fan-out share. A commit to a
// partition this node owns is a local call into the broker; one owned
// elsewhere goes through the remote committer (node RPC, in the cluster).
//
// Invariant: every path that makes a record visible ends in the owner's
// partition log commit (verified before the HWM moves; fsynced first unless
// the records are durable in this node's own ingress WAL, which is then
// kept until the returned Flusher succeeds); route only chooses where that
// commit runs. A commit pinned to a topic incarnation
// (non-zero) is carried to the owner with it, which refuses the records
// when its topic is another incarnation.
//
// Pass (pass.go) is the one bounded-parallel "commit these buckets, with
// quick retries" mechanism both callers use; it reports each bucket's last
// error and leaves what an error means to the caller.
package route

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/storage"
)

// Committer commits records to topic/partition on whichever node owns it.
// incarnation, when not 0, is the topic incarnation the records belong to
// (meta.Topic.Incarnation); 0 commits to whichever is current.
type Committer interface {
	Commit(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record) error
}

// CommitFunc adapts a function to Committer.
type CommitFunc func(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record) error

func (f CommitFunc) Commit(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record) error {
	return f(ctx, topic, incarnation, partition, recs)
}

// SourcedCommitter commits records read from this node's ingress WAL
// (storage.Source) into a partition this node owns: skipping what the log
// holds already and, when src.Lazy, without an fdatasync — then it
// returns the storage.Flusher that makes them durable, and the caller keeps their
// WAL copy until that Flush succeeds. A nil one means the records are
// durable already (a synchronous commit, or all skipped).
type SourcedCommitter interface {
	CommitSourced(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record, src storage.Source) (storage.Flusher, error)
}

// LocalFunc is the owner's commit on this node (broker.Broker.Commit): src
// is the records' ingress-WAL source, zero for records from elsewhere; the
// Flusher is non-nil only for a lazy sourced commit.
type LocalFunc func(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record, src storage.Source) (storage.Flusher, error)

// OwnerFunc reports the node owning a partition in this node's replica.
type OwnerFunc func(topic string, partition int) (owner string, ok bool)

// Router sends each commit to the owner: locally when that is this node,
// else through Remote.
type Router struct {
	Self   string
	Owner  OwnerFunc
	Local  LocalFunc
	Remote Committer // nil on a single node
}

// Commit implements Committer.
func (r *Router) Commit(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record) error {
	owner, ok := r.Owner(topic, partition)
	switch {
	case !ok, owner == r.Self:
		// Unknown here: the local path answers 404 or 400 with the
		// broker's own words, which dispatch uses to decide on discard.
		_, err := r.Local(ctx, topic, incarnation, partition, recs, storage.Source{})
		return err
	case r.Remote == nil:
		return apierr.Unavailable(time.Second, "partition %d of %q is owned by %q, and this node has no cluster transport", partition, topic, owner)
	}
	return r.Remote.Commit(ctx, topic, incarnation, partition, recs)
}

// CommitSourced implements SourcedCommitter: the source goes with a
// commit that runs here; a commit owned elsewhere is a plain, synchronous
// one (node RPC carries no source: those records are not skipped by seq,
// and a crash may repeat them as before).
func (r *Router) CommitSourced(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record, src storage.Source) (storage.Flusher, error) {
	if owner, ok := r.Owner(topic, partition); !ok || owner == r.Self {
		return r.Local(ctx, topic, incarnation, partition, recs, src)
	}
	return nil, r.Commit(ctx, topic, incarnation, partition, recs)
}
