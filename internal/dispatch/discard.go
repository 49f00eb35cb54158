package dispatch

import (
	"context"
	"time"
)

// confirmTimeout bounds one leader confirmation of a discard.
const confirmTimeout = 5 * time.Second

// Incarnations is what LeaderDiscarder asks of the cluster's metastore;
// the wiring passes its *meta.Store (dispatch sits below meta and names
// none of its types).
type Incarnations interface {
	// CurrentIncarnation returns the incarnation of topic this replica
	// holds as current (0: created before incarnations); false when the
	// topic is absent.
	CurrentIncarnation(topic string) (uint64, bool)
	// AppliedCaughtUp reports whether this replica has applied
	// everything the leader had committed when it last heard from it.
	AppliedCaughtUp() bool
	// ConfirmIncarnationGone asks the leader whether incarnation inc of
	// topic is no longer its current one.
	ConfirmIncarnationGone(ctx context.Context, topic string, inc uint64) (bool, error)
}

// LeaderDiscarder is a server's Discarder: records of a topic incarnation
// go only when this replica does not hold that incarnation as current
// (the topic is absent, or is another incarnation), the replica is caught
// up, and the leader confirms the incarnation is not current. Incarnation 0
// (a version-1 WAL record) or a topic without one (created before
// incarnations) is settled by the topic's absence alone, as before.
func LeaderDiscarder(ms Incarnations) Discarder {
	return func(ctx context.Context, topic string, inc uint64) bool {
		if cur, ok := ms.CurrentIncarnation(topic); ok && (inc == 0 || cur == 0 || cur == inc) {
			return false
		}
		if !ms.AppliedCaughtUp() {
			return false
		}
		cctx, cancel := context.WithTimeout(ctx, confirmTimeout)
		defer cancel()
		gone, err := ms.ConfirmIncarnationGone(cctx, topic, inc)
		return err == nil && gone
	}
}
