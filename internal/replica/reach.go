package replica

import (
	"errors"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

// Whether this follower reaches its leader. A leader cut off from its
// followers but not from the metastore keeps its heartbeats and so its
// leadership; only its followers can tell (docs/replication-faults.md, "A
// leader its followers cannot reach"). The follower notes since when its
// fetches fail to reach the leader; the node reports that with its
// heartbeat and the controller moves the leadership once a majority of
// the copies cannot reach the leader.

// Unreachable is the leader a follower has failed to reach since Since.
type Unreachable struct {
	Leader string
	Epoch  uint64
	Since  time.Time
}

// Unreachable reports the leader this follower has not reached since
// some time: ok is false while its fetches are answered (an empty
// answer counts: nothing new is not a fault), and when no fetch was
// tried since the view last named another leader or epoch.
func (f *Follower) Unreachable() (u Unreachable, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing.Since.IsZero() || f.failing.Leader != f.view.Leader || f.failing.Epoch != f.view.Epoch {
		return Unreachable{}, false
	}
	return f.failing, true
}

// noteReach records how a fetch to leader at epoch, sent at sent, went:
// err is the transport's answer, before the follower applied it. An
// answer in the engine's words (a refusal the leader itself wrote)
// reached the leader; any other error (a timeout, a refused or cut
// connection) did not. The first failure starts the count at its
// sending — no answer came from then on, and a cut link fails a fetch
// only at its timeout, seconds later; a later failure keeps that start.
func (f *Follower) noteReach(leader string, epoch uint64, sent time.Time, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil || answered(err) {
		f.failing = Unreachable{}
		return
	}
	if f.failing.Since.IsZero() || f.failing.Leader != leader || f.failing.Epoch != epoch {
		f.failing = Unreachable{Leader: leader, Epoch: epoch, Since: sent}
	}
}

// answered reports whether a fetch error is a refusal the leader wrote:
// the leader was reached. Over node RPC a refusal arrives typed
// (*refusal.Error); a failure to reach the node does not.
func answered(err error) bool {
	if _, ok := errors.AsType[*refusal.Error](err); ok {
		return true
	}
	for _, e := range []error{ErrStaleEpoch, ErrNotReady, ErrDeposed, ErrNotReplica, ErrOffsetAhead, ErrStateLost, ErrWrongPartition} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
