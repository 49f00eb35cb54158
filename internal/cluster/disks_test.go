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

// disked is a controller on n1 with members b, c, e recorded on disks
// "b1", "c1", "e1", heartbeating each second from their recorded disk
// unless beat says otherwise.
func disked(t *testing.T, as ...meta.Assignment) (*Node, *meta.Store, *clock.Fake) {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Time{})
	ms := metatest.Leader(t, t.TempDir(), "n1")
	for _, id := range []string{"b", "c", "e"} {
		must(t, ms.UpsertMember(ctx, meta.Member{ID: id, State: meta.MemberAlive, LastHeartbeatMs: clock.Epoch.UnixMilli(), DiskID: id + "1"}))
	}
	must(t, ms.CreateTopic(ctx, meta.Topic{Name: "r", Partitions: len(as), ReplicationFactor: 3}, as, nil))
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(), Clock: clk}
	run(t, n)
	idle(t, clk)
	return n, ms, clk
}

// TestNewDiskLeavesEveryInSyncSet: a heartbeat announcing another disk
// than the recorded one records it and takes the member out of every
// in-sync set before it counts; a partition it led is then led outside
// its in-sync set, and the controller's next tick elects a member of the
// set although the old leader still heartbeats.
func TestNewDiskLeavesEveryInSyncSet(t *testing.T) {
	ctx := context.Background()
	n, ms, clk := disked(t,
		replicated("r", 0, []string{"b", "c", "n1"}, "b", "c", "n1"),
		replicated("r", 1, []string{"n1", "b"}, "n1", "b", "c"))
	beat := func(b string) {
		t.Helper()
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "b", DiskID: b}))
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "c", DiskID: "c1"}))
		clk.Advance(time.Second)
		idle(t, clk)
	}
	beat("b1")
	beat("b1")
	if as := ms.Assignments("r"); as[0].Owner != "b" || as[0].LeaderEpoch != 1 {
		t.Fatalf("b's partition changed while b heartbeats from its disk: %+v", as[0])
	}
	must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "b", DiskID: "b2"}))
	if m, _ := ms.Member("b"); m.DiskID != "b2" {
		t.Fatalf("b's disk recorded as %q after a heartbeat from b2", m.DiskID)
	}
	as := ms.Assignments("r")
	if !slices.Equal(as[0].InSync, []string{"c", "n1"}) || as[0].Owner != "b" {
		t.Fatalf("r/0 right after b's new disk: %+v", as[0])
	}
	if !slices.Equal(as[1].InSync, []string{"n1"}) {
		t.Fatalf("r/1 right after b's new disk: in sync %v, want [n1] (below a majority: b's copies are gone)", as[1].InSync)
	}
	beat("b2")
	if a := ms.Assignments("r")[0]; a.Owner != "c" || a.LeaderEpoch != 2 || !slices.Equal(a.InSync, []string{"c", "n1"}) {
		t.Fatalf("r/0 a tick after its leader's disk was replaced: %+v, want led by c at epoch 2", a)
	}
	// The same disk again is an ordinary heartbeat: nothing more leaves.
	must(t, ms.SetInSync(ctx, meta.SetInSyncCmd{Topic: "r", Partition: 1, Epoch: 1, Leader: "n1", InSync: []string{"n1", "b"}, Disks: map[string]string{"b": "b2"}}))
	beat("b2")
	if a := ms.Assignments("r")[1]; !slices.Equal(a.InSync, []string{"n1", "b"}) {
		t.Fatalf("r/1 after b was re-admitted on its new disk: %+v", a)
	}
}

// TestFailoverPicksOnlyAMemberOnItsRecordedDisk: an in-sync member whose
// latest heartbeat did not announce its recorded disk is not elected.
func TestFailoverPicksOnlyAMemberOnItsRecordedDisk(t *testing.T) {
	ctx := context.Background()
	n, ms, clk := disked(t, replicated("r", 0, []string{"b", "c", "e"}, "b", "c", "e"))
	for s := 1; s <= 6; s++ {
		// c announces no disk (an older binary): its recorded one stays,
		// and it does not match.
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "c"}))
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "e", DiskID: "e1"}))
		clk.Advance(time.Second)
		idle(t, clk)
	}
	if a := ms.Assignments("r")[0]; a.Owner != "e" || a.LeaderEpoch != 2 {
		t.Fatalf("after b fell silent: %+v, want e elected (c's heartbeats named no disk)", a)
	}
}

// TestFencedUntilTheOwnDiskIsRecorded: an answered heartbeat renews the
// lease only while this node's metastore replica records the disk it
// runs on.
func TestFencedUntilTheOwnDiskIsRecorded(t *testing.T) {
	ctx := context.Background()
	ms := metatest.Leader(t, t.TempDir(), "n1")
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1", DiskID: "d2"}, Meta: ms, Transport: &fakeTransport{}, Log: quiet(),
		Clock: clock.NewFake(time.Time{})}
	n.noteAnswered(n.clock().Now())
	if !n.Fenced() {
		t.Fatal("not fenced with no member record")
	}
	must(t, ms.UpsertMember(ctx, meta.Member{ID: "n1", DiskID: "d1"}))
	if !n.Fenced() {
		t.Fatal("not fenced while another disk is recorded")
	}
	must(t, ms.ReplaceDisk(ctx, "n1", "d1", "d2"))
	if n.Fenced() {
		t.Fatal("fenced with an answered heartbeat and its disk recorded")
	}
}

// TestJoinFromANewDisk: a wiped node rejoins (its Raft state went with
// the disk); the join records its new disk, as a heartbeat would, before
// it admits the node.
func TestJoinFromANewDisk(t *testing.T) {
	ctx := context.Background()
	n, ms, _ := disked(t, replicated("r", 0, []string{"n1", "b", "c"}, "n1", "b", "c"))
	// c's Raft address answers nothing here, so its admission cannot
	// commit (a lone voter adding one): only what comes before it counts.
	jctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	n.HandleJoin(jctx, meta.Member{ID: "c", RaftAddr: "127.0.0.1:9", DiskID: "c2"})
	if m, _ := ms.Member("c"); m.DiskID != "c2" {
		t.Fatalf("c after its join from a new disk: %+v", m)
	}
	if a := ms.Assignments("r")[0]; !slices.Equal(a.InSync, []string{"n1", "b"}) {
		t.Fatalf("in sync %v after c joined from a new disk, want [n1 b]", a.InSync)
	}
}
