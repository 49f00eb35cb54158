package meta

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/narad-io/narad/internal/testutil"
)

// leaderConfirmer answers a follower's read index from the leader itself,
// as the node RPC does between processes.
type leaderConfirmer struct {
	fakeConfirmer
	leader *Store
}

func (c *leaderConfirmer) ReadIndex(ctx context.Context, _ Member) (uint64, error) {
	return c.leader.ReadIndexAsLeader(ctx)
}

// TestCatchUpSeesEveryAcknowledgedWrite: a topic the leader acknowledged
// is not yet applied on a follower (its FSM is held); CatchUp on the
// follower cannot succeed while it is held, and once it returns the
// follower knows the topic. On the leader, the read index covers its last
// write; a follower refuses to answer one itself.
func TestCatchUpSeesEveryAcknowledgedWrite(t *testing.T) {
	ctx := testCtx(t)
	leader := newLeader(t)
	o2 := testOptions(t.TempDir(), "127.0.0.1:0")
	o2.NodeID, o2.Bootstrap = "n2", false
	o2.HeartbeatTimeout, o2.ElectionTimeout, o2.LeaderLeaseTimeout = 500*time.Millisecond, 500*time.Millisecond, 250*time.Millisecond
	o2.Confirmer = &leaderConfirmer{leader: leader}
	follower, err := Open(o2)
	must(t, err)
	t.Cleanup(func() { _ = follower.Close() })
	must(t, leader.raft.AddVoter("n2", raft.ServerAddress(follower.RaftAddr()), 0, 5*time.Second).Error())
	testutil.WaitFor(t, "follower sees the leader", func() bool { id, _ := follower.Leader(); return id == "n1" })
	must(t, follower.CatchUp(ctx)) // nothing outstanding: at once

	entered, release := make(chan struct{}), make(chan struct{})
	hook := func(l *raft.Log) {
		if l.Type == raft.LogCommand {
			select {
			case <-entered:
			default:
				close(entered)
			}
			<-release
		}
	}
	follower.fsm.applyHook.Store(&hook)
	must(t, leader.CreateTopic(ctx, plainTopic("fresh", 1), nil, nil)) // acknowledged
	select {
	case <-entered:
	case <-time.After(waitLimit):
		t.Fatal("the create never reached the follower's FSM")
	}
	v, err := leader.ReadIndexAsLeader(ctx)
	if err != nil || v < leader.Versions().Topics {
		t.Fatalf("leader read index %d, %v; want at least the create's version %d", v, err, leader.Versions().Topics)
	}
	if _, ok := follower.Topic("fresh"); ok {
		t.Fatal("the follower applied the create while its FSM was held")
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = follower.CatchUp(short)
	cancel()
	if err == nil {
		t.Fatal("CatchUp succeeded while an acknowledged write was unapplied here")
	}
	follower.fsm.applyHook.Store(nil)
	close(release)
	must(t, follower.CatchUp(ctx))
	if _, ok := follower.Topic("fresh"); !ok {
		t.Fatal("CatchUp returned but the follower does not know the acknowledged topic")
	}
	if _, err := follower.ReadIndexAsLeader(ctx); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("ReadIndexAsLeader on a follower: %v, want ErrNotLeader", err)
	}
	must(t, follower.Close())
}
