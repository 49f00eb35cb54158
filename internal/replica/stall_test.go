package replica

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A leader whose followers stop fetching (it reaches the metastore but
// none of them) says why it cannot commit, once the records have waited
// LagMax, and stops saying so once they are committed.
func TestLeaderSaysWhyItCannotCommit(t *testing.T) {
	r := newLeaderRig(t, 2)
	mustFetch(t, r, "b", 1)
	r.l.tick(context.Background())
	if s := r.l.Stats(); s.Stall != "" || s.Stalls != 0 {
		t.Fatalf("stalled at once: %+v", s)
	}
	r.clk.Advance(DefaultLagMax + time.Second)
	r.l.tick(context.Background())
	s := r.l.Stats()
	if s.Stalls != 1 || s.StallFor <= DefaultLagMax ||
		!strings.Contains(s.Stall, "b (acknowledged 1 of 2, last fetch 3s ago)") || !strings.Contains(s.Stall, "c (no fetch in this epoch)") {
		t.Fatalf("stats of a stalled leader: %+v", s)
	}
	r.clk.Advance(time.Second)
	r.l.tick(context.Background())
	if s := r.l.Stats(); s.Stalls != 1 || s.Stall == "" {
		t.Fatalf("one stall counted twice, or forgotten: %+v", s)
	}
	r.l.Update(r.md.view()) // whatever the ticks proposed
	mustFetch(t, r, "b", 2)
	mustFetch(t, r, "c", 2)
	if c := r.l.Committed(); c != 2 {
		t.Fatalf("committed %d, want 2", c)
	}
	r.l.tick(context.Background())
	if s := r.l.Stats(); s.Stall != "" || s.StallFor != 0 || s.Stalls != 1 {
		t.Fatalf("stats once committed: %+v", s)
	}
}

// Below a majority in sync, the reason names the set, not a follower.
func TestLeaderStallBelowAMajority(t *testing.T) {
	r := newLeaderRig(t, 1)
	r.md.replaceDisk("b", diskOf("b", 1))
	r.md.replaceDisk("c", diskOf("c", 1))
	r.l.Update(r.md.view())
	r.clk.Advance(DefaultLagMax + time.Second)
	r.l.tick(context.Background())
	r.clk.Advance(DefaultLagMax + time.Second)
	r.l.tick(context.Background())
	if s := r.l.Stats(); !strings.Contains(s.Stall, "below a majority of the 3 replicas") {
		t.Fatalf("stall of a leader alone in sync: %q", s.Stall)
	}
}

// With exactly a majority in sync the set is not the reason: the reason
// names the follower the committed point waits for.
func TestLeaderStallAtAMajorityNamesTheFollower(t *testing.T) {
	r := newLeaderRig(t, 2)
	r.md.replaceDisk("c", diskOf("c", 1)) // in sync: [a b], a majority of 3
	r.l.Update(r.md.view())
	mustFetch(t, r, "b", 1)
	for range 3 { // the first tick's restatement lets the point reach 1
		r.clk.Advance(DefaultLagMax + time.Second)
		r.l.tick(context.Background())
		r.l.Update(r.md.view())
	}
	if s := r.l.Stats(); s.InSync != 2 || !strings.Contains(s.Stall, "b (acknowledged 1 of 2") {
		t.Fatalf("stall with %d in sync: %q, want the follower it waits for", s.InSync, s.Stall)
	}
}
