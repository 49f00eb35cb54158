package cluster

import (
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// SuspectAfter is how long a member's recorded heartbeat may be silent
// before the member shows as suspect: two records missed (RecordEvery),
// and a second for the write. A SIGKILLed node so shows suspect within
// about 11 s, where dead marking waits DeadAfter.
const SuspectAfter = 2*RecordEvery + time.Second

// StateSuspect is how a member shows while alive in its record but silent
// past SuspectAfter. It is a view, never stored: only the controller
// marks a member dead, after DeadAfter.
const StateSuspect = "suspect"

// ShownState is m's state as an operator is shown it at now: its record's
// (alive, dead), or suspect while alive but silent. self is never
// suspect: it answers the question.
func ShownState(m meta.Member, self string, now time.Time) string {
	if m.State == meta.MemberAlive && m.ID != self && m.LastHeartbeatMs > 0 &&
		now.UnixMilli()-m.LastHeartbeatMs > SuspectAfter.Milliseconds() {
		return StateSuspect
	}
	return m.State
}
