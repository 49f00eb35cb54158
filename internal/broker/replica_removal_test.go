package broker

import (
	"errors"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
)

// A removed replica's data goes only while no role runs for it here: a
// follower still placed here refuses the removal (nothing removed), one
// the placement dropped allows it.
func TestReplicaDataRemovedOnlyWithoutARole(t *testing.T) {
	eng := &fakeEngine{}
	n := newTestNode(t, Config{Replication: eng})
	createReplicated(t, n, "r", "n2")
	waitFor(t, "the follower role", func() bool { f := eng.follower(0); return f != nil && f.running.Load() })
	called := false
	if err := n.b.WithoutReplica("r", 0, func() error { called = true; return nil }); !errors.Is(err, hosted.ErrReplicaHosted) || called {
		t.Fatalf("removal under a running follower: %v (ran: %v)", err, called)
	}
	setPlacement(t, n, meta.Assignment{Topic: "r", Partition: 0, Owner: "n2", Replicas: []string{"n2", "n3", "n4"},
		InSync: []string{"n2", "n3"}, LeaderEpoch: 1, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}}})
	waitFor(t, "the role to be forgotten", func() bool { return !n.b.roles.HostsReplica("r", 0) })
	if err := n.b.WithoutReplica("r", 0, func() error { called = true; return nil }); err != nil || !called {
		t.Fatalf("removal once no longer placed here: %v (ran: %v)", err, called)
	}
}

// The factor lowered to 1: the leader's copy, left alone, is reopened
// unheld — every record it holds is visible, its uncommitted tail too —
// and takes commits as a single copy does.
func TestLoweredToOneCopyReopensUnheld(t *testing.T) {
	n, _, fl := readyLeader(t, Config{ReplicaCommitWait: 100 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- n.commit("r", 0, "a", "b") }()
	waitFor(t, "two records", func() bool { return fl.log.End() == 2 })
	fl.commitTo(2)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := n.commit("r", 0, "c"); err == nil { // no quorum: 503, stored here
		t.Fatal("a commit without a quorum answered")
	}

	rf := 1
	if err := n.ms.UpdateTopic(testCtx(t), meta.TopicUpdate{Name: "r", ReplicationFactor: &rf}); err != nil {
		t.Fatal(err)
	}
	setPlacement(t, n, meta.Assignment{Topic: "r", Partition: 0, Owner: "n1", Replicas: []string{"n1"}, InSync: []string{"n1"},
		LeaderEpoch: 1, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}}})
	waitFor(t, "the log reopened unheld", func() bool { return n.b.parts.Peek("r", 0) != nil && !n.b.parts.IsHeld("r", 0) })
	if err := n.commit("r", 0, "d"); err != nil {
		t.Fatalf("a commit to the single copy: %v", err)
	}
	msgs, err := n.consume("r", 0, 10)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("after lowering to one copy: %d records, %v; want 4", len(msgs), err)
	}
}

// A placement listing this node as a replica refuses the removal even
// before (or without) a role running for it.
func TestReplicaDataKeptWhilePlacedHere(t *testing.T) {
	n := newTestNode(t, Config{}) // no engine: no role ever runs
	createReplicated(t, n, "r", "n2")
	called := false
	if err := n.b.WithoutReplica("r", 0, func() error { called = true; return nil }); !errors.Is(err, hosted.ErrReplicaHosted) || called {
		t.Fatalf("removal while placed here: %v (ran: %v)", err, called)
	}
}
