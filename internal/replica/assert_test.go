package replica

import (
	"fmt"
	"strings"
	"testing"
)

// In a race build a Leader whose state breaks an invariant panics at its
// next step, naming the invariant; in other builds the check is compiled
// out. The state is broken by hand (a committed point past the log's
// end, which no sequence of calls produces).
func TestLeaderInvariantsFollowTheRaceTag(t *testing.T) {
	for name, step := range map[string]func(r *leaderRig){
		"Update":      func(r *leaderRig) { r.l.Update(r.md.view()) },
		"HandleFetch": func(r *leaderRig) { _, _ = r.fetch("b", 1) },
	} {
		t.Run(name, func(t *testing.T) {
			r := newLeaderRig(t, 2)
			r.l.mu.Lock()
			r.l.committed = 7
			r.l.mu.Unlock()
			got := panicOf(func() { step(r) })
			switch {
			case assertInvariants && !strings.Contains(got, "committed point 7 past the local end 2"):
				t.Fatalf("race build: %s on a broken leader panicked with %q, want the invariant named", name, got)
			case !assertInvariants && got != "":
				t.Fatalf("non-race build: %s panicked with %q, want the check compiled out", name, got)
			}
		})
	}
}

func panicOf(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	f()
	return ""
}
