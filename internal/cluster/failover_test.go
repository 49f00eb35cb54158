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

func replicated(topic string, p int, inSync []string, replicas ...string) meta.Assignment {
	return meta.Assignment{Topic: topic, Partition: p, Owner: replicas[0], Replicas: replicas, InSync: inSync,
		LeaderEpoch: 1, EpochStarts: []meta.EpochStart{{Epoch: 1}}}
}

// TestFailoverElectsAnInSyncReplica: a replicated partition whose leader
// has been silent for more than FailoverAfter — counted from the later of
// its last heartbeat and the controller's first turn — gets the first
// in-sync replica heard from within FailoverAfter as leader, at epoch+1,
// at the controller's first turn past that (it looks every FailoverEvery);
// with no such replica it keeps waiting.
func TestFailoverElectsAnInSyncReplica(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Time{})
	ms := metatest.Leader(t, t.TempDir(), "n1")
	for _, id := range []string{"b", "c", "d", "e"} {
		if err := ms.UpsertMember(ctx, meta.Member{ID: id, State: meta.MemberAlive, LastHeartbeatMs: clock.Epoch.UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	top := meta.Topic{Name: "r", Partitions: 3, ReplicationFactor: 3}
	if err := ms.CreateTopic(ctx, top, []meta.Assignment{
		replicated("r", 0, []string{"b", "c", "n1"}, "b", "c", "n1"), // b heartbeats until 5 s
		replicated("r", 1, []string{"d", "c", "n1"}, "d", "c", "n1"), // d never heard
		replicated("r", 2, []string{"d", "e"}, "d", "e", "c"),        // nobody in sync heard
	}, nil); err != nil {
		t.Fatal(err)
	}
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(), Clock: clk}
	run(t, n)
	idle(t, clk)
	const bStops = 5 * time.Second // b's last heartbeat
	first := FailoverEvery         // the controller's first turn: it notes that it leads
	for at := FailoverEvery; at <= 12*time.Second; at += FailoverEvery {
		clk.Advance(FailoverEvery)
		idle(t, clk)
		as := ms.Assignments("r")
		// Elected at the first turn FailoverAfter or more after b's last
		// heartbeat, not a turn later.
		if want := map[bool]string{true: "b", false: "c"}[at-bStops < FailoverAfter]; as[0].Owner != want {
			t.Fatalf("%v in: partition 0 led by %q, want %q", at, as[0].Owner, want)
		}
		// d never heard: its silence counts from the controller's first turn.
		if want := map[bool]string{true: "d", false: "c"}[at-first < FailoverAfter]; as[1].Owner != want {
			t.Fatalf("%v in: partition 1 led by %q, want %q", at, as[1].Owner, want)
		}
		if as[2].Owner != "d" || as[2].LeaderEpoch != 1 {
			t.Fatalf("%v in: partition 2 elected with no in-sync replica heard: %+v", at, as[2])
		}
		if at <= bStops {
			must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "b"}))
		}
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "c"}))
	}
	a := ms.Assignments("r")[0]
	if a.LeaderEpoch != 2 || !slices.Equal(a.InSync, []string{"c", "n1"}) || !slices.Equal(a.Replicas, []string{"b", "c", "n1"}) {
		t.Fatalf("after the election: %+v", a)
	}
}

// TestFailoverPrefersACopyThatStays: a silent leader of a partition
// whose copy on c is leaving (a rebalance's move) gets n1, not c, first
// in the in-sync set though c is: c would have to hand over again.
func TestFailoverPrefersACopyThatStays(t *testing.T) {
	c := newControlled(t, 3, inSync("r", 0, "b", "c", "n1"))
	must(t, c.ms.SetReplicas(context.Background(), "r", 0, 1, []string{"b", "c", "n1", "d"}, "c")) // d joins, c is leaving
	c.heard = []string{"c", "d"}
	for range 5 {
		c.tick()
	}
	if got := c.ms.Assignments("r")[0]; got.Owner != "n1" || got.LeaderEpoch != 2 || got.Leaving != "c" {
		t.Fatalf("after b fell silent: %+v, want n1 elected, c still leaving", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReplicasFollowTheFactor: raising a topic's replication factor adds
// live nodes out of sync; lowering it drops out-of-sync followers first,
// then in-sync ones, never the leader.
func TestReplicasFollowTheFactor(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Time{})
	ms := metatest.Leader(t, t.TempDir(), "n1")
	for _, id := range []string{"b", "c"} {
		must(t, ms.UpsertMember(ctx, meta.Member{ID: id, State: meta.MemberAlive, LastHeartbeatMs: clock.Epoch.UnixMilli()}))
	}
	must(t, ms.CreateTopic(ctx, meta.Topic{Name: "t", Partitions: 1}, []meta.Assignment{{Topic: "t", Owner: "n1"}}, nil))
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(), Clock: clk}
	run(t, n)
	idle(t, clk)
	step := func(rf int) meta.Assignment {
		t.Helper()
		must(t, ms.UpdateTopic(ctx, meta.TopicUpdate{Name: "t", ReplicationFactor: &rf}))
		clk.Advance(time.Second)
		idle(t, clk)
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "b"}))
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "c"}))
		return ms.Assignments("t")[0]
	}
	if a := step(1); len(a.Replicas) != 0 {
		t.Fatalf("a single-copy partition was touched: %+v", a)
	}
	if a := step(3); !slices.Equal(a.Replicas, []string{"n1", "b", "c"}) || !slices.Equal(a.InSync, []string{"n1"}) || a.LeaderEpoch != 1 {
		t.Fatalf("raised to 3: %+v", a)
	}
	must(t, ms.SetInSync(ctx, meta.SetInSyncCmd{Topic: "t", Partition: 0, Epoch: 1, Leader: "n1", InSync: []string{"n1", "c"}}))
	if a := step(2); !slices.Equal(a.Replicas, []string{"n1", "c"}) || !slices.Equal(a.InSync, []string{"n1", "c"}) {
		t.Fatalf("lowered to 2: %+v (b, out of sync, should go first)", a)
	}
	if a := step(1); !slices.Equal(a.Replicas, []string{"n1"}) || a.Owner != "n1" {
		t.Fatalf("lowered to 1: %+v", a)
	}
}

// TestFencedAfterFenceAfterWithoutAnAnswer: the node's lease lasts
// FenceAfter from the sending of its last answered heartbeat (on the
// leader, a quorum's confirmation); a node never answered is fenced.
func TestFencedAfterFenceAfterWithoutAnAnswer(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	ms := metatest.Leader(t, t.TempDir(), "n1")
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(), Clock: clk}
	if !n.Fenced() {
		t.Fatal("a node never answered is not fenced")
	}
	run(t, n)
	idle(t, clk)
	var last time.Duration // when the last answered heartbeat was sent
	for last < 4*time.Second {
		clk.Advance(HeartbeatEvery)
		last += HeartbeatEvery
		idle(t, clk)
		if n.Fenced() {
			t.Fatalf("%v in: fenced while heartbeats are answered", last)
		}
	}
	// The metastore goes: no heartbeat is answered from now on.
	must(t, ms.Close())
	for gone := HeartbeatEvery; gone <= FenceAfter; gone += HeartbeatEvery {
		clk.Advance(HeartbeatEvery)
		idle(t, clk)
		if n.Fenced() {
			t.Fatalf("fenced %v after the last answered heartbeat, FenceAfter is %v", gone, FenceAfter)
		}
	}
	clk.Advance(time.Millisecond)
	if !n.Fenced() {
		t.Fatal("not fenced past FenceAfter without an answer")
	}
	// An older answer arriving late never moves the lease back.
	n.noteAnswered(clock.Epoch)
	if !n.Fenced() {
		t.Fatal("a late answer to an old heartbeat renewed the lease")
	}
}

// TestResizeKeepsOffTheParentsCopies: growth takes nodes not holding the
// parent partition's copies first, in rotation after the leader.
func TestResizeKeepsOffTheParentsCopies(t *testing.T) {
	a := meta.Assignment{Owner: "b"}
	live := []string{"a", "b", "c", "d"}
	if got := resize(a, []string{"b"}, 3, live, []string{"c"}); !slices.Equal(got, []string{"b", "d", "a"}) {
		t.Fatalf("grown to %v, want [b d a] (c holds the parent's copy)", got)
	}
	if got := resize(a, []string{"b"}, 4, live, []string{"c"}); !slices.Equal(got, []string{"b", "d", "a", "c"}) {
		t.Fatalf("grown to %v: the parent's node only when nothing else is left", got)
	}
}
