package meta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/narad-io/narad/internal/testutil"
)

// fakeConfirmer records its calls and answers as told.
type fakeConfirmer struct {
	mu                  sync.Mutex
	calls               []string
	exists, epochActive bool
	version             uint64
	incarnation         uint64
	err                 error
	last                Member // the leader of the last ConfirmTopic
}

func (c *fakeConfirmer) TopicIncarnation(_ context.Context, leader Member, name string) (bool, uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, leader.ID+"@"+leader.RaftAddr+" incarnation "+name)
	return c.exists, c.incarnation, c.err
}

func (c *fakeConfirmer) ConfirmTopic(_ context.Context, leader Member, name, epoch string) (bool, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, leader.ID+"@"+leader.RaftAddr+" "+name+"/"+epoch)
	c.last = leader
	return c.exists, c.epochActive, c.err
}

func (c *fakeConfirmer) ConfirmOwner(_ context.Context, leader Member, topic string, p int) (string, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, fmt.Sprintf("%s@%s owner %s/%d", leader.ID, leader.RaftAddr, topic, p))
	return "n1", "", c.err
}

func (c *fakeConfirmer) ReadIndex(_ context.Context, leader Member) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, leader.ID+"@"+leader.RaftAddr+" read index")
	return c.version, c.err
}

// A two-member cluster: n1 bootstraps, n2 starts join-only and n1 adds it
// (the cluster package will do this through its join RPC).
func TestFollowerReadsLocallyAndRefusesWrites(t *testing.T) {
	ctx := testCtx(t)
	leader := newLeader(t)

	o2 := testOptions(t.TempDir(), "127.0.0.1:0")
	o2.NodeID, o2.Bootstrap = "n2", false
	o2.HeartbeatTimeout, o2.ElectionTimeout, o2.LeaderLeaseTimeout = 500*time.Millisecond, 500*time.Millisecond, 250*time.Millisecond
	fc := &fakeConfirmer{exists: true}
	o2.Confirmer = fc
	follower, err := Open(o2)
	must(t, err)
	t.Cleanup(func() { _ = follower.Close() })

	// Join-only and alone: no leader, no writes, no confirmation.
	if follower.AppliedCaughtUp() {
		t.Fatal("a node with no leader claims to be caught up")
	}
	err = follower.CreateTopic(ctx, plainTopic("x", 1), nil, nil)
	var nle *NotLeaderError
	if !errors.As(err, &nle) || nle.LeaderAddr != "" {
		t.Fatalf("write without a leader: %v", err)
	}
	if _, _, err := follower.ConfirmTopic(ctx, "x", ""); !errors.Is(err, ErrNotConfirmed) {
		t.Fatalf("confirm without a leader: %v", err)
	}

	must(t, leader.raft.AddVoter("n2", raft.ServerAddress(follower.RaftAddr()), 0, 5*time.Second).Error())
	testutil.WaitFor(t, "follower sees the leader", func() bool { id, _ := follower.Leader(); return id == "n1" })
	must(t, leader.CreateTopic(ctx, plainTopic("orders", 2), nil, nil))
	testutil.WaitFor(t, "replication", func() bool { _, ok := follower.Topic("orders"); return ok })
	testutil.WaitFor(t, "follower caught up", follower.AppliedCaughtUp)
	if follower.Versions() != leader.Versions() {
		t.Fatalf("versions differ: %+v vs %+v", follower.Versions(), leader.Versions())
	}

	// A follower's write names the leader, for forwarding.
	err = follower.DeleteTopic(ctx, "orders")
	if !errors.As(err, &nle) || nle.LeaderID != "n1" || nle.LeaderAddr != leader.RaftAddr() {
		t.Fatalf("follower write: %v", err)
	}
	if !errors.Is(err, ErrNotLeader) {
		t.Fatalf("not ErrNotLeader: %v", err)
	}
	if err := follower.Barrier(ctx); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("follower barrier: %v", err)
	}

	// Confirmation: the Confirmer is asked about the leader.
	ex, cur, err := follower.ConfirmTopic(ctx, "orders", "e9")
	if err != nil || !ex || cur {
		t.Fatalf("confirm via confirmer = %v %v %v", ex, cur, err)
	}
	want := []string{"n1@" + leader.RaftAddr() + " orders/e9"}
	if !slices.Equal(fc.calls, want) {
		t.Fatalf("confirmer calls = %v, want %v", fc.calls, want)
	}
	if fc.last.RPCAddr != "" {
		t.Fatalf("a leader with no member record came with addresses: %+v", fc.last)
	}
	// Once the leader has recorded itself, the Confirmer gets its record:
	// the node-RPC address to ask at.
	must(t, leader.UpsertMember(ctx, Member{ID: "n1", RaftAddr: leader.RaftAddr(), RPCAddr: "rpc-of-n1"}))
	testutil.WaitFor(t, "the member record replicates", func() bool { _, ok := follower.Member("n1"); return ok })
	if _, _, err := follower.ConfirmTopic(ctx, "orders", "e9"); err != nil || fc.last.RPCAddr != "rpc-of-n1" || fc.last.ID != "n1" {
		t.Fatalf("confirmer got leader %+v, %v", fc.last, err)
	}
	fc.calls = nil
	// Incarnations are asked of the leader too; one that cannot tell (0,
	// an older leader) never makes a live topic's records "gone".
	for _, tc := range []struct {
		leaderInc uint64
		gone      bool
	}{{0, false}, {5, false}, {9, true}} {
		fc.incarnation = tc.leaderInc
		if gone, err := follower.ConfirmIncarnationGone(ctx, "orders", 5); err != nil || gone != tc.gone {
			t.Fatalf("incarnation 5 with the leader at %d: gone %v, %v; want %v", tc.leaderInc, gone, err, tc.gone)
		}
	}
	// Read-your-writes: a replica that knows the topic asks nobody; one
	// that lacks it, or an owner of a partition asked about (orders is
	// unplaced), asks the leader's read index first.
	fc.calls = nil
	follower.CatchUpUnlessKnown(ctx, "orders")
	if len(fc.calls) != 0 {
		t.Fatalf("a known topic asked the leader: %v", fc.calls)
	}
	follower.CatchUpUnlessKnown(ctx, "orders", 0)
	follower.CatchUpUnlessKnown(ctx, "nope")
	if ri := "n1@" + leader.RaftAddr() + " read index"; !slices.Equal(fc.calls, []string{ri, ri}) {
		t.Fatalf("unknown partition owner and topic: confirmer calls %v", fc.calls)
	}
	fc.calls = nil
	// A failing confirmer is "could not confirm".
	fc.err = errors.New("rpc down")
	if _, err := follower.ConfirmIncarnationGone(ctx, "orders", 5); !errors.Is(err, ErrNotConfirmed) {
		t.Fatalf("failing confirmer, incarnation: %v", err)
	}
	if _, _, err := follower.ConfirmTopic(ctx, "orders", ""); !errors.Is(err, ErrNotConfirmed) {
		t.Fatalf("failing confirmer: %v", err)
	}
	// The leader-only entry point refuses on a follower.
	if _, _, err := follower.ConfirmTopicAsLeader(ctx, "orders", ""); !errors.Is(err, ErrNotConfirmed) || !errors.Is(err, ErrNotLeader) {
		t.Fatalf("ConfirmTopicAsLeader on a follower: %v", err)
	}

	must(t, follower.Close())
}

// TestConfirmWithoutConfirmerIsNoAnswer: a node that is not the leader
// and has no Confirmer cannot confirm anything — an error, never a "gone".
func TestConfirmWithoutConfirmerIsNoAnswer(t *testing.T) {
	ctx := testCtx(t)
	o := testOptions(t.TempDir(), "127.0.0.1:0")
	o.NodeID, o.Bootstrap = "n2", false
	s, err := Open(o)
	must(t, err)
	t.Cleanup(func() { _ = s.Close() })
	if ex, cur, err := s.ConfirmTopic(ctx, "orders", ""); !errors.Is(err, ErrNotConfirmed) || ex || cur {
		t.Fatalf("confirm without confirmer = %v %v %v", ex, cur, err)
	}
	if gone, err := s.ConfirmIncarnationGone(ctx, "orders", 5); !errors.Is(err, ErrNotConfirmed) || gone {
		t.Fatalf("incarnation without confirmer = %v %v", gone, err)
	}
}
