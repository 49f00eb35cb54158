package cluster

import (
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// A member shows suspect once its recorded heartbeat is older than
// SuspectAfter, not before; a dead one stays dead; the asking node is
// never suspect to itself.
func TestShownState(t *testing.T) {
	now := time.UnixMilli(1_000_000_000)
	beat := func(ago time.Duration) meta.Member {
		return meta.Member{ID: "n2", State: meta.MemberAlive, LastHeartbeatMs: now.Add(-ago).UnixMilli()}
	}
	if s := ShownState(beat(SuspectAfter), "n1", now); s != meta.MemberAlive {
		t.Fatalf("silent exactly SuspectAfter: %s, want alive", s)
	}
	if s := ShownState(beat(SuspectAfter+time.Millisecond), "n1", now); s != StateSuspect {
		t.Fatalf("silent past SuspectAfter: %s, want suspect", s)
	}
	if s := ShownState(beat(time.Hour), "n2", now); s != meta.MemberAlive {
		t.Fatalf("the asking node itself: %s, want alive", s)
	}
	dead := beat(time.Hour)
	dead.State = meta.MemberDead
	if s := ShownState(dead, "n1", now); s != meta.MemberDead {
		t.Fatalf("a dead member: %s", s)
	}
}
