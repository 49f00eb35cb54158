package broker

import (
	"context"
	"errors"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

// A produce into a replicated partition whose leadership is changing
// hands is held, not refused: while the leader it was sent to cannot
// have taken it — the node could not be reached at all, or answered that
// it does not own the partition or may not take writes for now — and
// within leaderHold, the produce waits until this node's metastore
// replica names another leader, then goes there; it tries again every
// leaderRetry as well, since a leader that refused for a view behind or
// ahead of this node's may take it once the views agree, under the same
// name, and one whose node's lease lapsed serves again once it hears from
// the cluster. A client then sees a slower 202 rather than a 503 during
// a failover, which takes a few seconds (docs/replication-faults.md,
// "The leader fails over").
//
// Only a failure that certainly stored nothing is held: a produce whose
// leader may have written it (a connection lost mid-call, a quorum wait
// that ran out) is answered at once, as before, because sending it again
// could store it twice; the client decides, with a msg_id if it must be
// exactly once.

// leaderHold bounds how long one produce waits for a partition's next
// leader: a failover on a LAN, the metastore's election included, takes
// about 3.5 s.
const leaderHold = 5 * time.Second

// leaderPoll is how often a held produce looks at the metastore replica
// for the partition's next leader; leaderRetry how long it waits at most
// before it tries again without one.
const (
	leaderPoll  = 50 * time.Millisecond
	leaderRetry = 500 * time.Millisecond
)

// storedNothing reports whether a commit's failure means the node it was
// sent to did nothing with the records: the call never reached it, or it
// refused them before writing because it does not own the partition, the
// partition is frozen for a move, or its leader may not take writes yet
// or for now (not_ready: taking the leadership over, its epoch start not
// recorded, its node's lease lapsed; package refusal keeps not_ready for
// refusals before the write). The last is what a leader answers for the
// moment its node misses the cluster's heartbeats, as when its link to
// the metastore leader flaps: held, the produce goes in once the node
// hears again, instead of a 503. not_leader and stale_epoch are not
// among them: a leader deposed while it waited for its copies answers
// with them after writing (hosted.Roles.AwaitQuorum), and a copy may
// keep what it wrote.
func storedNothing(err error) bool {
	for _, k := range []error{refusal.ErrUndelivered, refusal.ErrNotOwner, refusal.ErrFrozen, refusal.ErrNotReady} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// holdForLeader calls commit, and again after a failure that stored
// nothing, as soon as owner names another leader than the one tried or
// leaderRetry after the try, for at most hold after the first such
// failure (and within ctx). commit reads the owner itself; owner is this
// node's view of it ("", false: none yet). It returns commit's last
// error.
func holdForLeader(ctx context.Context, hold time.Duration, owner func() (string, bool), commit func() error) error {
	var deadline time.Time
	for {
		tried, _ := owner()
		triedAt := time.Now()
		err := commit()
		if err == nil || !storedNothing(err) {
			return err
		}
		if deadline.IsZero() {
			deadline = triedAt.Add(hold)
		}
		for {
			if time.Now().After(deadline) {
				return err
			}
			select {
			case <-ctx.Done():
				return err
			case <-time.After(leaderPoll):
			}
			if next, ok := owner(); ok && next != tried || time.Since(triedAt) >= leaderRetry {
				break
			}
		}
	}
}
