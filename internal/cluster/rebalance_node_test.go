package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
)

// controlled is a controller on n1 over a real metastore with members
// b, c and d and the topic r of replication factor rf placed as given;
// its tick heartbeats the members named in *heard, then steps the fake
// clock one controller tick, and returns r's placement.
type controlled struct {
	t     *testing.T
	ms    *meta.Store
	n     *Node
	clk   *clock.Fake
	heard []string
	stop  func()
	// healAfter and heals are the next started controller's HealAfter
	// and Heals.
	healAfter time.Duration
	heals     *counter
}

func newControlled(t *testing.T, rf int, as ...meta.Assignment) *controlled {
	t.Helper()
	ctx := context.Background()
	ms := metatest.Leader(t, t.TempDir(), "n1")
	for _, id := range []string{"b", "c", "d"} {
		must(t, ms.UpsertMember(ctx, meta.Member{ID: id, State: meta.MemberAlive, LastHeartbeatMs: clock.Epoch.UnixMilli()}))
	}
	must(t, ms.CreateTopic(ctx, meta.Topic{Name: "r", Partitions: len(as), ReplicationFactor: rf}, as, nil))
	c := &controlled{t: t, ms: ms}
	c.start()
	return c
}

// start runs a new controller (a new Node: nothing in memory) on the
// metastore, stopping the one before.
func (c *controlled) start() {
	if c.stop != nil {
		c.stop()
	}
	c.clk = clock.NewFake(time.Time{})
	c.n = &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: c.ms, Transport: &fakeTransport{}, Log: quiet(), Clock: c.clk,
		HealAfter: c.healAfter}
	if c.heals != nil {
		c.n.Heals = c.heals
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.n.Run(ctx) }()
	var stopped bool
	c.stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	c.t.Cleanup(c.stop)
	idle(c.t, c.clk)
}

func (c *controlled) tick() []meta.Assignment {
	c.t.Helper()
	for _, id := range c.heard {
		must(c.t, c.n.HandleHeartbeat(context.Background(), meta.Member{ID: id}))
	}
	c.clk.Advance(time.Second)
	idle(c.t, c.clk)
	return c.ms.Assignments("r")
}

// caughtUp has each partition's leader put every replica in sync, as a
// leader does once its followers have fetched its log end.
func (c *controlled) caughtUp() {
	c.t.Helper()
	for _, a := range c.ms.Assignments("r") {
		must(c.t, c.ms.SetInSync(context.Background(), meta.SetInSyncCmd{Topic: "r", Partition: a.Partition, Epoch: a.LeaderEpoch, Leader: a.Owner, InSync: a.Replicas}))
	}
}

func copiesOn(as []meta.Assignment) map[string]int {
	out := map[string]int{}
	for _, a := range as {
		for _, id := range a.Replicas {
			if id != a.Leaving {
				out[id]++
			}
		}
	}
	return out
}

// TestRebalanceSpreadsCopiesToANewNode (fake clock, a real metastore):
// an RF=3 topic of three partitions on n1, b, c; d, silent at first, gets
// nothing; once heard, the controller starts two moves in one tick (the
// fullest nodes' follower copies, each marked leaving in the change that
// adds d out of sync); nothing changes while d catches up — the factor
// reconcile does not drop d, no further move starts; once d is in sync
// the marked copies leave (marks cleared), every node holds two or three
// copies, and nothing changes after.
func TestRebalanceSpreadsCopiesToANewNode(t *testing.T) {
	c := newControlled(t, 3, inSync("r", 0, "n1", "b", "c"), inSync("r", 1, "b", "c", "n1"), inSync("r", 2, "c", "n1", "b"))
	c.heard = []string{"b", "c"}
	before := c.tick()
	if got := c.tick(); !slices.EqualFunc(got, before, meta.Assignment.Equal) {
		t.Fatalf("changed with d silent: %+v", got)
	}
	c.heard = append(c.heard, "d")
	moving := c.tick()
	want := []meta.Assignment{before[0], before[1], before[2]}
	want[0].Replicas, want[0].Leaving = []string{"n1", "b", "c", "d"}, "b"
	want[1].Replicas, want[1].Leaving = []string{"b", "c", "n1", "d"}, "c"
	if !slices.EqualFunc(moving, want, meta.Assignment.Equal) {
		t.Fatalf("moves started:\n got %+v\nwant %+v", moving, want)
	}
	for range 3 {
		if got := c.tick(); !slices.EqualFunc(got, moving, meta.Assignment.Equal) {
			t.Fatalf("changed while d catches up:\n got %+v\nwant %+v", got, moving)
		}
	}
	c.caughtUp()
	done := c.tick()
	if a := done[0]; a.Leaving != "" || !slices.Equal(a.Replicas, []string{"n1", "c", "d"}) || a.Owner != "n1" {
		t.Fatalf("partition 0 after d caught up: %+v", a)
	}
	if a := done[1]; a.Leaving != "" || !slices.Equal(a.Replicas, []string{"b", "n1", "d"}) || a.Owner != "b" {
		t.Fatalf("partition 1 after d caught up: %+v", a)
	}
	for id, n := range copiesOn(done) {
		if n < 2 || n > 3 {
			t.Fatalf("%s holds %d copies after the rebalance: %v", id, n, copiesOn(done))
		}
	}
	c.caughtUp()
	settled := c.ms.Assignments("r")
	for range 2 {
		if got := c.tick(); !slices.EqualFunc(got, settled, meta.Assignment.Equal) {
			t.Fatalf("changed after the rebalance settled:\n got %+v\nwant %+v", got, settled)
		}
	}
}

// TestReplicaMoveOutlivesItsController: a move started by one controller
// is finished by the next, which knows of it only from the metastore —
// and which never drops the replacement while it catches up. (n1 leads
// every partition, so the moved copy is a leader's; the other partitions'
// leaderships spread meanwhile.)
func TestReplicaMoveOutlivesItsController(t *testing.T) {
	c := newControlled(t, 2, inSync("r", 0, "n1", "b"), inSync("r", 1, "n1", "b"), inSync("r", 2, "n1", "c"))
	c.heard = []string{"b", "c", "d"}
	started := c.tick()[0]
	if started.Leaving != "n1" || !slices.Equal(started.Replicas, []string{"n1", "b", "d"}) {
		t.Fatalf("the move of n1's copy of partition 0 to d did not start: %+v", started)
	}
	c.start() // a new controller: nothing of the move in memory
	for range 2 {
		if got := c.tick()[0]; !got.Equal(started) {
			t.Fatalf("the new controller changed the move while d catches up:\n got %+v\nwant %+v", got, started)
		}
	}
	c.caughtUp()
	a := c.tick()[0]
	if a.Leaving != "" || !slices.Equal(a.Replicas, []string{"b", "d"}) || a.Owner == "n1" || a.LeaderEpoch != 2 {
		t.Fatalf("the new controller did not finish the move (leadership handed over, n1's copy removed): %+v", a)
	}
}

// TestLeadershipSpreadsOneATick: three partitions all led by n1 (as
// after failovers) get other leaders, one election a tick, each to the
// copy leading fewest, until no node leads two more than another; then,
// with every copy back in sync, nothing flaps.
func TestLeadershipSpreadsOneATick(t *testing.T) {
	c := newControlled(t, 3, inSync("r", 0, "n1", "b", "c"), inSync("r", 1, "n1", "c", "b"), inSync("r", 2, "n1", "b", "c"))
	c.heard = []string{"b", "c"}
	leaders := func(as []meta.Assignment) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.Owner)
		}
		return out
	}
	for i, want := range [][]string{{"b", "n1", "n1"}, {"b", "c", "n1"}, {"b", "c", "n1"}} {
		if got := leaders(c.tick()); !slices.Equal(got, want) {
			t.Fatalf("tick %d: leaders %v, want %v", i+1, got, want)
		}
	}
	c.caughtUp()
	settled := c.ms.Assignments("r")
	for range 3 {
		if got := c.tick(); !slices.EqualFunc(got, settled, meta.Assignment.Equal) {
			t.Fatalf("changed with leadership spread and every copy in sync:\n got %+v\nwant %+v", got, settled)
		}
	}
}
