package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
)

// fakeTransport records joins and heartbeats; join answers as told.
type fakeTransport struct {
	mu     sync.Mutex
	joins  []string
	beats  []string
	answer func(addr string) (JoinResult, error)
}

func (f *fakeTransport) Join(_ context.Context, addr string, m meta.Member) (JoinResult, error) {
	f.mu.Lock()
	f.joins = append(f.joins, addr)
	f.mu.Unlock()
	if f.answer == nil {
		return JoinResult{}, errors.New("unreachable")
	}
	return f.answer(addr)
}

func (f *fakeTransport) Heartbeat(_ context.Context, addr string, _ meta.Member, _ []LeaderReport) error {
	f.mu.Lock()
	f.beats = append(f.beats, addr)
	f.mu.Unlock()
	return nil
}

func (f *fakeTransport) joined() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.joins)
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// run starts n.Run and stops it at the end of the test.
func run(t *testing.T, n *Node) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// parked waits until the node's loop waits on the fake clock again: every
// duty that came due has run. Joining, there is one loop.
func parked(t *testing.T, clk *clock.Fake) {
	t.Helper()
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("the node never waited on its clock")
	}
}

// idle is parked for a recorded node: its heartbeat and control loops
// both wait on the clock.
func idle(t *testing.T, clk *clock.Fake) {
	t.Helper()
	if !clk.BlockUntil(2, 10*time.Second) {
		t.Fatal("the node's loops never both waited on its clock")
	}
}

// loneFollower is a metastore that never bootstraps and is never added:
// no leader, never admitted.
func loneFollower(t *testing.T) *meta.Store {
	t.Helper()
	ms, err := meta.Open(meta.Options{Dir: filepath.Join(t.TempDir(), "metastore"), NodeID: "n9", BindAddr: "127.0.0.1:0",
		Logger: quiet(), RaftLogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	return ms
}

// TestJoinWalksThePeersEveryJoinEvery: a node not admitted asks each peer
// in turn, follows a non-leader's pointer to the leader at once, and
// walks the list again JoinEvery later — not before.
func TestJoinWalksThePeersEveryJoinEvery(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	tr := &fakeTransport{answer: func(addr string) (JoinResult, error) {
		if addr == "p1" {
			return JoinResult{LeaderID: "n1", LeaderRPCAddr: "leader"}, nil
		}
		return JoinResult{}, errors.New("unreachable")
	}}
	n := &Node{Self: meta.Member{ID: "n9"}, Meta: loneFollower(t), Transport: tr, Peers: []string{"p1", "p2"}, Log: quiet(), Clock: clk}
	run(t, n)
	walk := []string{"p1", "leader", "p2"}
	parked(t, clk)
	if got := tr.joined(); !slices.Equal(got, walk) {
		t.Fatalf("first walk %v, want %v", got, walk)
	}
	clk.Advance(JoinEvery - time.Millisecond)
	parked(t, clk)
	if got := tr.joined(); !slices.Equal(got, walk) {
		t.Fatalf("asked again before JoinEvery: %v", got)
	}
	clk.Advance(time.Millisecond)
	parked(t, clk)
	if got := tr.joined(); !slices.Equal(got, append(slices.Clone(walk), walk...)) {
		t.Fatalf("second walk %v, want the list twice", got)
	}
}

// TestFollowerRefusesLeaderDuties: a follower names the leader (none
// here) instead of admitting, and refuses to record a heartbeat.
func TestFollowerRefusesLeaderDuties(t *testing.T) {
	n := &Node{Self: meta.Member{ID: "n9"}, Meta: loneFollower(t), Transport: &fakeTransport{}, Log: quiet()}
	res, err := n.HandleJoin(context.Background(), meta.Member{ID: "n2"})
	if err != nil || res.Admitted {
		t.Fatalf("follower join answer %+v, %v", res, err)
	}
	if err := n.HandleHeartbeat(context.Background(), meta.Member{ID: "n2"}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("follower heartbeat: %v", err)
	}
}

func lastHeartbeat(t *testing.T, ms *meta.Store, id string) time.Time {
	t.Helper()
	m, ok := ms.Member(id)
	if !ok {
		t.Fatalf("no member record for %s", id)
	}
	return time.UnixMilli(m.LastHeartbeatMs)
}

// TestHeartbeatRecordedEveryRecordEvery: the leader records its own
// heartbeat at once, then every RecordEvery on the clock, though it
// heartbeats every second.
func TestHeartbeatRecordedEveryRecordEvery(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	ms := metatest.Leader(t, t.TempDir(), "n1")
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(), Clock: clk}
	run(t, n)
	idle(t, clk)
	if got := lastHeartbeat(t, ms, "n1"); !got.Equal(clock.Epoch) {
		t.Fatalf("first heartbeat at %v, want %v", got, clock.Epoch)
	}
	for i := 1; i <= 11; i++ {
		clk.Advance(time.Second)
		idle(t, clk)
		want := clock.Epoch.Add(time.Duration(i/5) * RecordEvery)
		if got := lastHeartbeat(t, ms, "n1"); !got.Equal(want) {
			t.Fatalf("%d s in: last heartbeat %v, want %v", i, got.Sub(clock.Epoch), want.Sub(clock.Epoch))
		}
	}
}

// TestControllerMarksSilentMembersDead: a member silent for more than
// DeadAfter is marked dead — but a new leader first gives everyone one
// full DeadAfter from its own first tick — and a heartbeat makes it alive
// again.
func TestControllerMarksSilentMembersDead(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Time{})
	ms := metatest.Leader(t, t.TempDir(), "n1")
	// b fell silent long before this leader; c heartbeats at 20 s.
	for id, at := range map[string]time.Time{"b": clock.Epoch.Add(-time.Hour), "c": clock.Epoch} {
		if err := ms.UpsertMember(ctx, meta.Member{ID: id, State: meta.MemberAlive, LastHeartbeatMs: at.UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(), Clock: clk}
	run(t, n)
	idle(t, clk)
	dir := Directory{Meta: ms}
	for s := 1; s <= 51; s++ {
		clk.Advance(time.Second)
		idle(t, clk)
		if s == 20 {
			if err := n.HandleHeartbeat(ctx, meta.Member{ID: "c"}); err != nil {
				t.Fatal(err)
			}
		}
		// The first tick (1 s) starts the leader's grace: b goes at 31 s.
		if got, want := dir.Alive("b"), s < 31; got != want {
			t.Fatalf("%d s in: b alive %v, want %v", s, got, want)
		}
		// c last heard at 20 s: silent more than 30 s from 51 s on.
		if got, want := dir.Alive("c"), s < 51; got != want {
			t.Fatalf("%d s in: c alive %v, want %v", s, got, want)
		}
		if !dir.Alive("n1") {
			t.Fatalf("%d s in: the leader marked itself dead", s)
		}
	}
	if err := n.HandleHeartbeat(ctx, meta.Member{ID: "b"}); err != nil || !dir.Alive("b") {
		t.Fatalf("b heartbeats again: alive %v, %v", dir.Alive("b"), err)
	}
}
