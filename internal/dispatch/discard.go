package dispatch

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// confirmTimeout bounds one leader confirmation of a discard.
const confirmTimeout = 5 * time.Second

// LeaderDiscarder is a server's Discarder: records of a topic incarnation
// go only when this replica does not hold that incarnation as current
// (the topic is absent, or is another incarnation), the replica is caught
// up, and the leader confirms the incarnation is not current. Incarnation 0
// (a version-1 WAL record) or a topic without one (created before
// incarnations) is settled by the topic's absence alone, as before.
func LeaderDiscarder(ms *meta.Store) Discarder {
	return func(ctx context.Context, topic string, inc uint64) bool {
		if t, ok := ms.Topic(topic); ok && (inc == 0 || t.Incarnation == 0 || t.Incarnation == inc) {
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
