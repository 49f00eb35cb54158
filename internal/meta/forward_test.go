package meta

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/narad-io/narad/internal/testutil"
)

// leaderForwarder hands a forwarded command to the leader's store, as the
// node RPC handler does.
type leaderForwarder struct {
	leader *Store
	calls  int
}

func (f *leaderForwarder) Forward(ctx context.Context, _ Member, cmd []byte) error {
	f.calls++
	return f.leader.ApplyForwarded(ctx, cmd)
}

// A partition leader that does not lead the metastore writes SetInSync,
// StartEpoch and RenewEpoch through the metastore leader; the leader takes only
// those commands that way, and never forwards again.
func TestReplicationWritesGoThroughTheLeader(t *testing.T) {
	ctx := testCtx(t)
	leader := newLeader(t)
	o2 := testOptions(t.TempDir(), "127.0.0.1:0")
	o2.NodeID, o2.Bootstrap = "n2", false
	o2.HeartbeatTimeout, o2.ElectionTimeout, o2.LeaderLeaseTimeout = 500*time.Millisecond, 500*time.Millisecond, 250*time.Millisecond
	fw := &leaderForwarder{leader: leader}
	o2.Forwarder = fw
	follower, err := Open(o2)
	must(t, err)
	t.Cleanup(func() { _ = follower.Close() })
	must(t, leader.raft.AddVoter("n2", raft.ServerAddress(follower.RaftAddr()), 0, 5*time.Second).Error())
	testutil.WaitFor(t, "follower sees the leader", func() bool { id, _ := follower.Leader(); return id == "n1" })

	top := plainTopic("r", 1)
	top.ReplicationFactor = 3
	must(t, leader.CreateTopic(ctx, top, []Assignment{replicatedPlacement(0, "n2", "n1", "c")}, nil))
	must(t, follower.SetInSync(ctx, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "n2", InSync: []string{"n2", "n1"}}))
	if err := follower.StartEpoch(ctx, "r", 0, 1, "n2", 3); !errors.Is(err, ErrConflict) {
		t.Fatalf("a second start of epoch 1 through the leader: %v, want ErrConflict", err)
	}
	must(t, follower.RenewEpoch(ctx, "r", 0, 1, "n2"))
	if fw.calls != 3 {
		t.Fatalf("%d forwards, want 3", fw.calls)
	}
	got := leader.Assignments("r")[0]
	if !slices.Equal(got.InSync, []string{"n2", "n1"}) || got.LeaderEpoch != 2 || got.Owner != "n2" {
		t.Fatalf("on the leader: in sync %v, epoch %d led by %q; want [n2 n1], 2, n2", got.InSync, got.LeaderEpoch, got.Owner)
	}
	// Other writes are not taken that way; a follower never forwards on.
	cmd, err := NewCommand(OpDeleteTopic, DeleteTopicCmd{Name: "r"})
	must(t, err)
	if err := leader.ApplyForwarded(ctx, cmd.Encode()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a forwarded delete: %v, want ErrInvalid", err)
	}
	cmd, err = NewCommand(OpSetInSync, SetInSyncCmd{Topic: "r", Epoch: 1, Leader: "n2", InSync: []string{"n2", "n1", "c"}})
	must(t, err)
	if err := follower.ApplyForwarded(ctx, cmd.Encode()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("a forwarded command on a follower: %v, want ErrNotLeader", err)
	}
	if fw.calls != 3 {
		t.Fatalf("the follower forwarded a forwarded command")
	}
	must(t, follower.Close())
}
