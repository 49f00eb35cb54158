package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
)

// cutRig is a controller (n1, holding no copy) over one replicated
// partition r/0 whose leader b keeps heartbeating; the test says, turn
// by turn, who else heartbeats and what each reports.
type cutRig struct {
	t     *testing.T
	ms    *meta.Store
	n     *Node
	clk   *clock.Fake
	start time.Time
	// elections counts CutOffElections.
	elections counter
}

func newCutRig(t *testing.T, a meta.Assignment) *cutRig {
	t.Helper()
	ctx := context.Background()
	ms := metatest.Leader(t, t.TempDir(), "n1")
	for _, id := range []string{"b", "c", "d", "e", "f"} {
		must(t, ms.UpsertMember(ctx, meta.Member{ID: id, State: meta.MemberAlive, LastHeartbeatMs: clock.Epoch.UnixMilli()}))
	}
	must(t, ms.CreateTopic(ctx, meta.Topic{Name: "r", Partitions: 1, ReplicationFactor: len(a.Replicas)}, []meta.Assignment{a}, nil))
	r := &cutRig{t: t, ms: ms, clk: clock.NewFake(time.Time{})}
	r.n = &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(), Clock: r.clk,
		CutOffElections: &r.elections}
	run(t, r.n)
	idle(t, r.clk)
	r.start = r.clk.Now()
	return r
}

// turn has each member of heard heartbeat with its reports (those in
// reports), then lets one controller turn pass; it returns r/0.
func (r *cutRig) turn(reports map[string][]LeaderReport, heard ...string) meta.Assignment {
	r.t.Helper()
	for _, id := range heard {
		must(r.t, r.n.HandleHeartbeat(context.Background(), meta.Member{ID: id}, reports[id]...))
	}
	r.clk.Advance(FailoverEvery)
	idle(r.t, r.clk)
	return r.ms.Assignments("r")[0]
}

// cutFor is a report that b, leader of r/0 at epoch, has not been reached
// for d.
func cutFor(leader string, epoch uint64, d time.Duration) LeaderReport {
	return LeaderReport{Topic: "r", Partition: 0, Leader: leader, LeaderEpoch: epoch, For: d}
}

// TestCutOffLeaderGivesWay: b, heard throughout, is reported unreachable
// by both its followers from the controller's first turn on; the in-sync
// one, c, leads once the reports cover FailoverAfter — not a turn before.
// d is out of sync (the leader dropped it, as a leader cut off does) yet
// its report counts: what matters is that b cannot reach a majority.
func TestCutOffLeaderGivesWay(t *testing.T) {
	r := newCutRig(t, replicated("r", 0, []string{"b", "c"}, "b", "c", "d"))
	for at := time.Duration(0); at < 6*time.Second; at += FailoverEvery {
		elapsed := r.clk.Now().Sub(r.start)
		a := r.turn(map[string][]LeaderReport{"c": {cutFor("b", 1, elapsed)}, "d": {cutFor("b", 1, elapsed)}}, "b", "c", "d")
		// The turn that just ran, a turn after the reports arrived, saw
		// the followers cut off since the start for elapsed+FailoverEvery:
		// enough once that reached FailoverAfter.
		if want := map[bool]string{true: "c", false: "b"}[elapsed+FailoverEvery >= FailoverAfter]; a.Owner != want {
			t.Fatalf("%v in (reports covering %v): r/0 led by %q, want %q", at, elapsed, a.Owner, want)
		}
		if a.Owner == "c" && a.LeaderEpoch != 2 {
			t.Fatalf("elected at epoch %d, want 2", a.LeaderEpoch)
		}
	}
	if r.elections.n.Load() != 1 {
		t.Fatalf("counted %d cut-off elections, want 1", r.elections.n.Load())
	}
}

// TestOneFollowerDoesNotDeposeTheLeader: of three copies, one follower
// reporting its leader unreachable — its own link may be what broke —
// never moves the leadership: the leader still reaches a majority (c).
func TestOneFollowerDoesNotDeposeTheLeader(t *testing.T) {
	r := newCutRig(t, replicated("r", 0, []string{"b", "c", "d"}, "b", "c", "d"))
	for at := time.Duration(0); at < 10*time.Second; at += FailoverEvery {
		if a := r.turn(map[string][]LeaderReport{"d": {cutFor("b", 1, time.Minute)}}, "b", "c", "d"); a.Owner != "b" {
			t.Fatalf("%v in: one follower of three deposed the leader: %+v", at, a)
		}
	}
}

// TestCutOffLeaderStaysWithoutAnInSyncReporter: the reporters are a
// majority but none of them is in sync (the record holds b alone):
// electing one could lose acknowledged records, so b stays.
func TestCutOffLeaderStaysWithoutAnInSyncReporter(t *testing.T) {
	r := newCutRig(t, replicated("r", 0, []string{"b"}, "b", "c", "d"))
	for at := time.Duration(0); at < 6*time.Second; at += FailoverEvery {
		rep := map[string][]LeaderReport{"c": {cutFor("b", 1, time.Minute)}, "d": {cutFor("b", 1, time.Minute)}}
		if a := r.turn(rep, "b", "c", "d"); a.Owner != "b" {
			t.Fatalf("%v in: elected a copy not in sync: %+v", at, a)
		}
	}
}

// TestStaleReportsDoNotCount: reports arrive once and their senders fall
// silent; the reports would cover FailoverAfter only once older than
// FenceAfter, stale as the heartbeat that brought them, though their
// senders count as heard a while longer. Reports naming another epoch or
// leader never count.
func TestStaleReportsDoNotCount(t *testing.T) {
	r := newCutRig(t, replicated("r", 0, []string{"b", "c", "d"}, "b", "c", "d"))
	// Others' leaders and epochs: the leader elected since, or before.
	for _, other := range []LeaderReport{cutFor("b", 2, time.Minute), cutFor("e", 1, time.Minute)} {
		for range 3 {
			if a := r.turn(map[string][]LeaderReport{"c": {other}, "d": {other}}, "b", "c", "d"); a.Owner != "b" {
				t.Fatalf("reports of another epoch or leader (%+v) deposed b: %+v", other, a)
			}
		}
	}
	fence, after := r.n.timings().FenceAfter, r.n.timings().FailoverAfter
	short := after - fence - 2*FailoverEvery // FailoverAfter is covered two turns past FenceAfter
	sent := r.clk.Now()
	r.turn(map[string][]LeaderReport{"c": {cutFor("b", 1, short)}, "d": {cutFor("b", 1, short)}}, "b", "c", "d")
	for r.clk.Now().Sub(sent) <= after+FailoverEvery {
		if a := r.turn(nil, "b"); a.Owner != "b" {
			t.Fatalf("%v after the reports: stale reports deposed b: %+v", r.clk.Now().Sub(sent), a)
		}
	}
}

// TestCutOffHandOffsWait: right after c took over from b, b and d report
// c unreachable, with reports long enough already: the next hand-off
// waits FailoverAfter after the first.
func TestCutOffHandOffsWait(t *testing.T) {
	r := newCutRig(t, replicated("r", 0, []string{"b", "c", "d"}, "b", "c", "d"))
	var first time.Time
	for first.IsZero() {
		if a := r.turn(map[string][]LeaderReport{"c": {cutFor("b", 1, time.Minute)}, "d": {cutFor("b", 1, time.Minute)}}, "b", "c", "d"); a.Owner == "c" {
			first = r.clk.Now().Add(-FailoverEvery) // elected in the turn that just ran
		}
		if r.clk.Now().Sub(r.start) > 10*time.Second {
			t.Fatal("c never took over")
		}
	}
	ctx := context.Background()
	must(t, r.ms.StartEpoch(ctx, "r", 0, 2, "c", 0))
	must(t, r.ms.SetInSync(ctx, meta.SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "c", InSync: []string{"c", "d"}}))
	for {
		a := r.turn(map[string][]LeaderReport{"b": {cutFor("c", 2, time.Minute)}, "d": {cutFor("c", 2, time.Minute)}}, "b", "c", "d")
		since := r.clk.Now().Add(-FailoverEvery).Sub(first) // when the turn that just ran saw it
		if a.Owner != "c" {
			if since < FailoverAfter || a.Owner != "d" {
				t.Fatalf("%v after the first hand-off: r/0 led by %q (epoch %d)", since, a.Owner, a.LeaderEpoch)
			}
			break
		}
		if since > FailoverAfter+time.Second {
			t.Fatalf("no second hand-off %v after the first", since)
		}
	}
}

// TestHandOffsAreForgotten: a hand-off is kept while it damps cutOff
// (FailoverAfter) and forgotten after, so a deleted topic's partitions
// do not stay in the controller's memory.
func TestHandOffsAreForgotten(t *testing.T) {
	n := &Node{}
	at := time.Unix(1_000_000, 0)
	after := n.timings().FailoverAfter
	n.noteHandOff(partKey{"gone", 0}, at)
	n.noteHandOff(partKey{"kept", 0}, at.Add(after/2))
	n.noteHandOff(partKey{"new", 0}, at.Add(after))
	if _, ok := n.handedOff[partKey{"gone", 0}]; ok {
		t.Errorf("a hand-off FailoverAfter old is still kept: %v", n.handedOff)
	}
	for _, k := range []partKey{{"kept", 0}, {"new", 0}} {
		if _, ok := n.handedOff[k]; !ok {
			t.Errorf("hand-off %v, younger than FailoverAfter, was forgotten: %v", k, n.handedOff)
		}
	}
}
