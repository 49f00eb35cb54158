package hosted

import "github.com/narad-io/narad/internal/replica"

// wakingLog is a leader's log whose Release also wakes the topic's
// waiting consumers (Roles' wake, as a commit to a single copy does):
// records of a replicated partition become visible when a quorum holds
// them, so that is when to wake them — not when the leader has written
// them (a consumer woken then finds nothing, waits again, and may miss
// the wake that mattered), nor only when a producer's wait for the quorum
// ends (one that timed out leaves records a quorum holds later).
//
// Its fields are comparable, so two leaders' logs compare as the logs
// underneath do.
type wakingLog struct {
	replica.Log
	roles *Roles
	topic string
}

// Release is the log's, and wakes when the visible end moved.
func (w wakingLog) Release(upTo uint64) error {
	before := w.Log.HWM()
	err := w.Log.Release(upTo)
	if w.Log.HWM() > before {
		w.roles.wake(w.topic)
	}
	return err
}
