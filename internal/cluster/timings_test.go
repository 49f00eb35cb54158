package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
)

func TestTimingsCheck(t *testing.T) {
	if err := LANTimings.Check(); err != nil {
		t.Fatalf("the constants fail their own check: %v", err)
	}
	for _, tt := range []struct {
		name string
		t    Timings
		want string
	}{
		{"fence at failover", Timings{HeartbeatEvery: time.Second, FenceAfter: 5 * time.Second, FailoverAfter: 5 * time.Second}, "below FailoverAfter"},
		{"fence past failover", Timings{HeartbeatEvery: time.Second, FenceAfter: 6 * time.Second, FailoverAfter: 5 * time.Second}, "below FailoverAfter"},
		{"two heartbeats a lease", Timings{HeartbeatEvery: time.Second, FenceAfter: 2 * time.Second, FailoverAfter: 5 * time.Second}, "three heartbeats"},
		{"zero", Timings{FenceAfter: time.Second, FailoverAfter: 2 * time.Second}, "positive"},
	} {
		err := tt.t.Check()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Check() = %v; want an error with %q", tt.name, err, tt.want)
		}
	}
}

// A node fences itself after its own FenceAfter, not the constant's.
func TestFencedFollowsTheNodesTimings(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	n := &Node{Clock: clk, Timings: Timings{HeartbeatEvery: time.Second, FenceAfter: 4 * time.Second, FailoverAfter: 6 * time.Second}}
	n.noteAnswered(clk.Now())
	clk.Advance(FenceAfter + time.Second)
	if n.Fenced() {
		t.Fatalf("fenced %v after an answer, within the node's FenceAfter of 4 s", FenceAfter+time.Second)
	}
	clk.Advance(3 * time.Second)
	if !n.Fenced() {
		t.Fatal("not fenced 5.5 s after the last answer, past the node's FenceAfter of 4 s")
	}
}

// The controller waits its node's FailoverAfter, not the constant's,
// before it elects another leader for a silent partition leader.
func TestFailoverFollowsTheNodesTimings(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Time{})
	ms := metatest.Leader(t, t.TempDir(), "n1")
	for _, id := range []string{"b", "c"} {
		must(t, ms.UpsertMember(ctx, meta.Member{ID: id, State: meta.MemberAlive, LastHeartbeatMs: clock.Epoch.UnixMilli()}))
	}
	must(t, ms.CreateTopic(ctx, meta.Topic{Name: "r", Partitions: 1, ReplicationFactor: 3},
		[]meta.Assignment{replicated("r", 0, []string{"b", "c", "n1"}, "b", "c", "n1")}, nil))
	wan := Timings{HeartbeatEvery: 500 * time.Millisecond, FenceAfter: 5 * time.Second, FailoverAfter: 7500 * time.Millisecond}
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(), Clock: clk, Timings: wan}
	run(t, n)
	idle(t, clk)
	first := FailoverEvery // b is never heard: its silence counts from the controller's first turn
	for at := FailoverEvery; at <= 10*time.Second; at += FailoverEvery {
		clk.Advance(FailoverEvery)
		idle(t, clk)
		want := map[bool]string{true: "b", false: "c"}[at-first < wan.FailoverAfter]
		if got := ms.Assignments("r")[0].Owner; got != want {
			t.Fatalf("%v in: partition led by %q, want %q (FailoverAfter %v)", at, got, want, wan.FailoverAfter)
		}
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "c"}))
	}
}
