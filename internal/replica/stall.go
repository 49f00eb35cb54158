package replica

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// A stall is a leader with records past its committed point that have
// waited longer than LagMax without the point moving: nothing it takes
// is acknowledged, and produces answer 503 after their quorum wait. The
// leader can say why (which in-sync members it waits for and what it last
// heard of them, or a set below a majority), which is what an operator
// needs when the leader reaches the metastore but none of its followers
// (a network partition that isolates it from them only): the in-sync set
// cannot shrink below a majority, so nothing else changes.

// noteStallLocked is called each tick: it starts, ends or keeps the
// current stall.
func (l *Leader) noteStallLocked(now time.Time) {
	if !l.ready || l.ended != nil || l.log.End() <= l.committed {
		l.waitingSince, l.stall = time.Time{}, ""
		return
	}
	if l.waitingSince.IsZero() {
		l.waitingSince = now // advanceLocked clears it when the point moves
	}
	if now.Sub(l.waitingSince) <= l.cfg.LagMax {
		l.stall = ""
		return
	}
	if l.stall == "" {
		l.stalls++
	}
	l.stall = l.stallReasonLocked(now)
}

// stallReasonLocked says, in an operator's words, what the committed
// point waits for.
func (l *Leader) stallReasonLocked(now time.Time) string {
	v := l.view
	if len(v.InSync) < meta.Majority(len(v.Replicas)) {
		return fmt.Sprintf("the in-sync set %v is below a majority of the %d replicas: waiting for a follower to catch up and rejoin",
			v.InSync, len(v.Replicas))
	}
	end := l.log.End()
	var waits []string
	for _, n := range l.strictSetLocked() {
		if n == l.cfg.Self {
			continue
		}
		switch p := l.peers[n]; {
		case p == nil || !p.known:
			waits = append(waits, n+" (no fetch in this epoch)")
		case p.acked < end:
			waits = append(waits, fmt.Sprintf("%s (acknowledged %d of %d, last fetch %s ago)", n, p.acked, end,
				now.Sub(p.lastFetchAt).Round(100*time.Millisecond)))
		}
	}
	slices.Sort(waits)
	if len(waits) == 0 {
		return "waiting for the next fetch of the in-sync followers"
	}
	return "waiting for in-sync followers: " + strings.Join(waits, ", ")
}
