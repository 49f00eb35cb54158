package meta

import (
	"errors"
	"testing"
)

// Move commands are compare-and-swaps: a stale proposal changes nothing.
func TestMoveTargetAndFlip(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.CreateTopic(ctx, plainTopic("orders", 2), []Assignment{
		{Topic: "orders", Partition: 0, Owner: "n1"}, {Topic: "orders", Partition: 1, Owner: "n2"}}, nil))
	before := s.LatestDomainVersion()

	if err := s.SetTarget(ctx, "orders", 0, "n2", "n3"); !errors.Is(err, ErrConflict) {
		t.Fatalf("target with the wrong owner: %v, want ErrConflict", err)
	}
	if err := s.SetTarget(ctx, "orders", 5, "n1", "n3"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("target of a missing partition: %v", err)
	}
	must(t, s.SetTarget(ctx, "orders", 0, "n1", "n3"))
	if a := s.Assignments("orders")[0]; a.Owner != "n1" || a.Target != "n3" {
		t.Fatalf("after set target: %+v", a)
	}
	if s.LatestDomainVersion() <= before {
		t.Fatal("a target change must move the assignments version (cursors and routing re-read)")
	}
	for _, bad := range []struct{ from, to string }{{"n2", "n3"}, {"n1", "n4"}, {"n1", ""}} {
		if err := s.FlipOwner(ctx, "orders", 0, bad.from, bad.to); !errors.Is(err, ErrConflict) {
			t.Fatalf("flip %s -> %s: %v, want ErrConflict", bad.from, bad.to, err)
		}
	}
	must(t, s.FlipOwner(ctx, "orders", 0, "n1", "n3"))
	if a := s.Assignments("orders")[0]; a.Owner != "n3" || a.Target != "" {
		t.Fatalf("after flip: %+v", a)
	}
	if err := s.FlipOwner(ctx, "orders", 0, "n1", "n3"); !errors.Is(err, ErrConflict) {
		t.Fatalf("a second flip: %v, want ErrConflict", err)
	}
	// Cancel: target back to "".
	must(t, s.SetTarget(ctx, "orders", 1, "n2", "n1"))
	must(t, s.SetTarget(ctx, "orders", 1, "n2", ""))
	if a := s.Assignments("orders")[1]; a.Owner != "n2" || a.Target != "" {
		t.Fatalf("after cancel: %+v", a)
	}
	owner, target, err := s.ConfirmOwner(ctx, "orders", 0)
	if err != nil || owner != "n3" || target != "" {
		t.Fatalf("ConfirmOwner = %q %q %v", owner, target, err)
	}
	if owner, _, err := s.ConfirmOwner(ctx, "gone", 0); err != nil || owner != "" {
		t.Fatalf("ConfirmOwner of a missing topic = %q %v", owner, err)
	}
}

// A partition lowered to one copy may move like any single copy; its copy
// list follows the owner, or raising the factor again would be refused.
func TestFlipOfALoweredCopyMovesItsReplicaList(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	top := plainTopic("orders", 1)
	top.ReplicationFactor = 3
	three := []string{"n1", "n2", "n3"}
	must(t, s.CreateTopic(ctx, top, []Assignment{{Topic: "orders", Partition: 0, Owner: "n1", Replicas: three,
		InSync: three, LeaderEpoch: 1, EpochStarts: []EpochStart{{Epoch: 1, Offset: 0}}}}, nil))
	must(t, s.SetReplicas(ctx, "orders", 0, 1, []string{"n1"}, ""))
	must(t, s.SetTarget(ctx, "orders", 0, "n1", "n4"))
	must(t, s.FlipOwner(ctx, "orders", 0, "n1", "n4"))
	a := s.Assignments("orders")[0]
	if a.Owner != "n4" || len(a.Replicas) != 1 || a.Replicas[0] != "n4" || len(a.InSync) != 1 || a.InSync[0] != "n4" {
		t.Fatalf("after the move: %+v, want replicas and in-sync [n4]", a)
	}
	must(t, s.SetReplicas(ctx, "orders", 0, a.LeaderEpoch, []string{"n4", "n2"}, ""))
}

func TestSetDraining(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.UpsertMember(ctx, Member{ID: "n2", RaftAddr: "10.0.0.2:7943"}))
	v := s.LatestDomainVersion()
	must(t, s.SetDraining(ctx, "n2", true))
	if m, _ := s.Member("n2"); !m.Draining {
		t.Fatal("not draining")
	}
	if s.LatestDomainVersion() != v {
		t.Fatal("a drain flag moved the routing version")
	}
	if err := s.SetDraining(ctx, "ghost", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("draining a missing member: %v", err)
	}
}
