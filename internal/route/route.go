// Package route answers "who owns topic/partition, and commit there": the
// one commit seam that produce dispatch and fan-out share. A commit to a
// partition this node owns is a local call into the broker; one owned
// elsewhere goes through the remote committer (node RPC, in the cluster).
//
// Invariant: every path that makes a record visible ends in the owner's
// partition log commit (fsync + verify before the HWM moves); route only
// chooses where that commit runs. A commit pinned to a topic incarnation
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

// OwnerFunc reports the node owning a partition in this node's replica.
type OwnerFunc func(topic string, partition int) (owner string, ok bool)

// Router sends each commit to the owner: locally when that is this node,
// else through Remote.
type Router struct {
	Self   string
	Owner  OwnerFunc
	Local  Committer
	Remote Committer // nil on a single node
}

// Commit implements Committer.
func (r *Router) Commit(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record) error {
	owner, ok := r.Owner(topic, partition)
	switch {
	case !ok:
		// Unknown here: the local path answers 404 or 400 with the
		// broker's own words, which dispatch uses to decide on discard.
		return r.Local.Commit(ctx, topic, incarnation, partition, recs)
	case owner == r.Self:
		return r.Local.Commit(ctx, topic, incarnation, partition, recs)
	case r.Remote == nil:
		return apierr.Unavailable(time.Second, "partition %d of %q is owned by %q, and this node has no cluster transport", partition, topic, owner)
	}
	return r.Remote.Commit(ctx, topic, incarnation, partition, recs)
}
