package cluster

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// counter is a Node.Heals that remembers its count.
type counter struct{ n atomic.Int64 }

func (c *counter) Inc() { c.n.Add(1) }

// newHealing is newControlled with a controller whose HealAfter is after:
// members n1 (the controller), b, c and d, every one heard until a test
// says otherwise.
func newHealing(t *testing.T, after time.Duration, rf int, as ...meta.Assignment) *controlled {
	t.Helper()
	c := newControlled(t, rf, as...)
	c.healAfter, c.heals = after, &counter{}
	c.start()
	c.heard = []string{"b", "c", "d"}
	return c
}

// leaderDropped has partition p's leader take id out of its in-sync set,
// as a leader does once a follower stops fetching.
func (c *controlled) leaderDropped(p int, id string) {
	c.t.Helper()
	a := c.ms.Assignments("r")[p]
	in := slices.DeleteFunc(slices.Clone(a.InSync), func(x string) bool { return x == id })
	must(c.t, c.ms.SetInSync(context.Background(), meta.SetInSyncCmd{Topic: "r", Partition: p, Epoch: a.LeaderEpoch, Leader: a.Owner, InSync: in}))
}

// cSilenced ticks once with everyone heard, then stops hearing c, whose
// copy of partition 0 the leader drops from the in-sync set.
func (c *controlled) cSilenced() {
	c.t.Helper()
	c.tick()
	c.heard = []string{"b", "d"}
	c.leaderDropped(0, "c")
}

// replacementsCaughtUp has the leader of every partition with a copy
// leaving put its replicas in sync but lost's, as once the replacement
// fetched its log end.
func (c *controlled) replacementsCaughtUp(lost string) {
	c.t.Helper()
	for _, a := range c.ms.Assignments("r") {
		if a.Leaving == "" {
			continue
		}
		in := slices.DeleteFunc(slices.Clone(a.Replicas), func(x string) bool { return x == lost })
		must(c.t, c.ms.SetInSync(context.Background(), meta.SetInSyncCmd{Topic: "r", Partition: a.Partition, Epoch: a.LeaderEpoch, Leader: a.Owner, InSync: in}))
	}
}

// TestHealReplacesACopyOnASilentNode (fake clock, a real metastore, one
// controller tick a second): c, holding a follower copy, falls silent.
// Nothing changes while it has been silent for HealAfter or less; once
// longer, d joins out of sync with c marked leaving, in one change, and
// the start is counted; nothing more happens while d catches up; once d
// is in sync c's copy is removed, and nothing changes after.
func TestHealReplacesACopyOnASilentNode(t *testing.T) {
	c := newHealing(t, 10*time.Second, 3, inSync("r", 0, "n1", "b", "c"))
	before := c.tick()[0]
	c.heard = []string{"b", "d"}
	for i := 1; i <= 10; i++ { // c silent for i seconds at most
		if got := c.tick()[0]; !got.Equal(before) {
			t.Fatalf("changed after %d s of silence, heal_after 10 s: %+v", i, got)
		}
		if i == 3 {
			c.leaderDropped(0, "c")
			before = c.ms.Assignments("r")[0]
		}
	}
	c.tick()
	healing := c.tick()[0]
	if !slices.Equal(healing.Replicas, []string{"n1", "b", "c", "d"}) || healing.Leaving != "c" ||
		!slices.Equal(healing.InSync, []string{"n1", "b"}) || healing.Owner != "n1" {
		t.Fatalf("the heal did not start (d added out of sync, c marked leaving): %+v", healing)
	}
	if n := c.heals.n.Load(); n != 1 {
		t.Fatalf("heals counted: %d, want 1", n)
	}
	for range 3 {
		if got := c.tick()[0]; !got.Equal(healing) {
			t.Fatalf("changed while d catches up:\n got %+v\nwant %+v", got, healing)
		}
	}
	c.replacementsCaughtUp("c")
	done := c.tick()[0]
	if !slices.Equal(done.Replicas, []string{"n1", "b", "d"}) || done.Leaving != "" || !slices.Equal(done.InSync, done.Replicas) {
		t.Fatalf("c's copy not removed once d caught up: %+v", done)
	}
	for range 3 {
		if got := c.tick()[0]; !got.Equal(done) {
			t.Fatalf("changed after the heal:\n got %+v\nwant %+v", got, done)
		}
	}
	if n := c.heals.n.Load(); n != 1 {
		t.Fatalf("heals counted: %d, want 1", n)
	}
}

// TestHealOffAtZero: with HealAfter 0 a silent node's copy stays, also
// once the node is marked dead (DeadAfter).
func TestHealOffAtZero(t *testing.T) {
	c := newHealing(t, 0, 3, inSync("r", 0, "n1", "b", "c"))
	c.cSilenced()
	before := c.ms.Assignments("r")[0]
	for i := 1; i <= int(DeadAfter/time.Second)+5; i++ {
		if got := c.tick()[0]; !got.Equal(before) {
			t.Fatalf("heal_after 0: changed after %d s of silence: %+v", i, got)
		}
	}
	if m, _ := c.ms.Member("c"); m.State != meta.MemberDead {
		t.Fatalf("c is not marked dead after %v: the test did not reach the case it means to", DeadAfter)
	}
}

// TestNoHealWhileHeard: a node heard from keeps its copies, out of sync
// or not, however long the controller runs.
func TestNoHealWhileHeard(t *testing.T) {
	c := newHealing(t, 2*time.Second, 3, inSync("r", 0, "n1", "b", "c"))
	c.leaderDropped(0, "c")
	before := c.ms.Assignments("r")[0]
	for i := range 10 {
		if got := c.tick()[0]; !got.Equal(before) {
			t.Fatalf("tick %d: a heard node's copy moved: %+v", i+1, got)
		}
	}
}

// TestNoHealOfADrainingNode: a silent node being decommissioned loses its
// copies by the drain, which marks nothing; the heal starts nothing.
func TestNoHealOfADrainingNode(t *testing.T) {
	c := newHealing(t, 2*time.Second, 3, inSync("r", 0, "n1", "b", "c"))
	c.tick()
	must(t, c.ms.SetDraining(context.Background(), "c", true))
	c.heard = []string{"b", "d"}
	for range 5 {
		c.tick()
	}
	a := c.ms.Assignments("r")[0]
	if a.Leaving != "" || !slices.Equal(a.Replicas, []string{"n1", "b", "c", "d"}) {
		t.Fatalf("the drain should have added d, marking nothing: %+v", a)
	}
	if n := c.heals.n.Load(); n != 0 {
		t.Fatalf("heals counted for a draining node: %d", n)
	}
}

// TestHealsAtMostMovesInFlight: six partitions each with a copy on the
// c, silent from the start; at most MaxReplicaMovesInFlight are marked at once, the
// replacements spread over the receivers holding fewest, and the others
// start as the first finish.
func TestHealsAtMostMovesInFlight(t *testing.T) {
	var as []meta.Assignment
	for p := range 6 {
		as = append(as, inSync("r", p, "n1", "c"))
	}
	c := newHealing(t, 2*time.Second, 2, as...)
	c.heard = []string{"b", "d"} // from the start: no rebalance moves n1's copies first
	for range 3 {
		c.tick()
	}
	// marked is the partitions marked, and those whose marked copy is c's.
	marked := func(as []meta.Assignment) (all, heals int) {
		for _, a := range as {
			if a.Leaving != "" {
				all++
			}
			if a.Leaving == "c" {
				heals++
			}
		}
		return all, heals
	}
	got := c.tick()
	if _, n := marked(got); n != MaxReplicaMovesInFlight {
		t.Fatalf("%d partitions healing, want %d: %+v", n, MaxReplicaMovesInFlight, got)
	}
	if on := copiesOn(got); on["b"] != 2 || on["d"] != 2 {
		t.Fatalf("replacements not spread over b and d: %v", on)
	}
	c.replacementsCaughtUp("c")
	c.tick()
	got = c.tick()
	// The last two heals go first; rebalance moves (n1 holds six copies,
	// b and d two each) may take the slots left.
	if all, n := marked(got); n != 2 || all > MaxReplicaMovesInFlight {
		t.Fatalf("after the first four finished: %d healing, want the last 2, %d marked in all: %+v", n, all, got)
	}
	c.replacementsCaughtUp("c")
	c.tick()
	for _, a := range c.tick() {
		if slices.Contains(a.Replicas, "c") {
			t.Fatalf("partition %d not healed: %+v", a.Partition, a)
		}
	}
	if n := c.heals.n.Load(); n != 6 {
		t.Fatalf("heals counted: %d, want 6", n)
	}
}

// TestNewControllerHealsNotAtOnce: c was silent far longer than HealAfter
// under a controller that did not heal; a new controller (nothing heard
// yet, so nothing in memory of c) counts c's silence from its own start
// and heals only HealAfter later.
func TestNewControllerHealsNotAtOnce(t *testing.T) {
	c := newHealing(t, 0, 3, inSync("r", 0, "n1", "b", "c"))
	c.cSilenced()
	for range 10 {
		c.tick()
	}
	c.healAfter = 5 * time.Second
	c.start()
	before := c.ms.Assignments("r")[0]
	for i := 1; i <= 5; i++ {
		if got := c.tick()[0]; !got.Equal(before) {
			t.Fatalf("the new controller healed %d s after it took over, heal_after 5 s: %+v", i, got)
		}
	}
	c.tick()
	if got := c.tick()[0]; got.Leaving != "c" {
		t.Fatalf("no heal 7 s after the new controller took over: %+v", got)
	}
}

// TestLostCopyPicks: a partition whose lost copy leads is failover's, one
// whose lost copy drains is the decommission's, one below its factor the
// reconcile's; the heal leaves them.
func TestLostCopyPicks(t *testing.T) {
	v := viewOf([]string{"n1", "b", "c", "d"}, "b")
	v.lost = func(id string) bool { return id == "b" }
	led := inSync("r", 0, "b", "n1", "c")
	if got := lostCopy(led, 3, v); got != "" {
		t.Fatalf("a lost leader's copy picked to heal: %q", got)
	}
	// With heal_after below the failover time a leader can be lost and
	// still heard: its copy is still failover's.
	heardLost := viewOf([]string{"n1", "b", "c", "d"})
	heardLost.lost = v.lost
	if got := lostCopy(led, 3, heardLost); got != "" {
		t.Fatalf("a lost leader's copy, still heard, picked to heal: %q", got)
	}
	followed := inSync("r", 0, "n1", "b", "c")
	if got := lostCopy(followed, 3, v); got != "b" {
		t.Fatalf("a lost follower's copy not picked: %q", got)
	}
	v.draining = func(id string) bool { return id == "b" }
	if got := lostCopy(followed, 3, v); got != "" {
		t.Fatalf("a draining node's copy picked to heal (the decommission moves it): %q", got)
	}
	v.draining = func(string) bool { return false }
	if got := lostCopy(followed, 4, v); got != "" {
		t.Fatalf("a partition below its factor picked to heal (the reconcile adds its copy): %q", got)
	}
}

// TestLostForZeroIsNever: with HealAfter 0 no member is lost, however
// long unheard (the controller's view keeps every receiver).
func TestLostForZeroIsNever(t *testing.T) {
	n := &Node{}
	now := time.Unix(1e9, 0)
	if n.lostFor(0, now)("c") {
		t.Fatal("lost with heal_after 0")
	}
	if !n.lostFor(time.Minute, now)("c") {
		t.Fatal("never heard, a minute after the start of time, heal_after 1 m: not lost")
	}
}
