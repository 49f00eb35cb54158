package meta

import (
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// members records member records with the given disk ids.
func (r *replFSM) members(disks map[string]string) {
	r.t.Helper()
	for id, d := range disks {
		must(r.t, r.apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: id, RaftAddr: id + ":1", DiskID: d}}))
	}
}

func (r *replFSM) member(id string) Member {
	r.t.Helper()
	var m Member
	must(r.t, r.f.view(func(tx *bolt.Tx) error {
		var err error
		m, _, err = readMember(tx, id)
		return err
	}))
	return m
}

// A heartbeat (an upsert) never changes a recorded disk id; the first one
// is taken (a member from before disk ids).
func TestUpsertKeepsTheRecordedDisk(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	must(t, r.apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "b", RaftAddr: "b:1"}}))
	r.members(map[string]string{"b": "db"})
	if got := r.member("b").DiskID; got != "db" {
		t.Fatalf("first disk id: recorded %q, want db", got)
	}
	for _, other := range []string{"dx", ""} {
		must(t, r.apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "b", RaftAddr: "b:1", DiskID: other, LastHeartbeatMs: 5}}))
		if got := r.member("b").DiskID; got != "db" {
			t.Fatalf("an upsert with disk %q changed the recorded one to %q", other, got)
		}
	}
}

func TestReplaceDisk(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	r.members(map[string]string{"a": "da", "b": "db", "c": "dc"})
	// b also in partition 1, and a single-copy partition on b: untouched.
	top := plainTopic("s", 2)
	top.ReplicationFactor = 3
	must(t, r.apply(OpCreateTopic, CreateTopicCmd{Topic: top, Assignments: []Assignment{
		{Topic: "s", Partition: 0, Owner: "b", Replicas: []string{"b", "c", "a"}, InSync: []string{"b", "c"}, LeaderEpoch: 1,
			EpochStarts: []EpochStart{{1, 0}}},
		{Topic: "s", Partition: 1, Owner: "b"}}}))
	replace := func(node, prev, disk string) ReplaceDiskCmd {
		return ReplaceDiskCmd{Node: node, Previous: prev, Disk: disk}
	}
	r.refused("no such member", ErrNotFound, OpReplaceDisk, replace("d", "", "dd"))
	r.refused("another previous disk", ErrConflict, OpReplaceDisk, replace("b", "dx", "db2"))
	r.refused("no disk", ErrInvalid, OpReplaceDisk, replace("b", "db", ""))
	r.refused("no node", ErrInvalid, OpReplaceDisk, replace("", "db", "db2"))

	must(t, r.apply(OpReplaceDisk, replace("b", "db", "db2")))
	if got := r.member("b").DiskID; got != "db2" {
		t.Fatalf("disk after the replacement: %q", got)
	}
	if got := r.placement("r", 0).InSync; !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("r/0 in sync %v, want [a c]", got)
	}
	// Even below a majority, and out from under its own leadership: the
	// controller elects c (failover).
	if got := r.placement("s", 0); !slices.Equal(got.InSync, []string{"c"}) || got.Owner != "b" {
		t.Fatalf("s/0 = %+v, want led by b, in sync [c]", got)
	}
	if got := r.placement("s", 1); got.Owner != "b" || len(got.InSync) != 0 {
		t.Fatalf("single-copy s/1 = %+v", got)
	}
	// A retry changes nothing more (b may have been re-admitted since).
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b", "c"},
		Disks: map[string]string{"b": "db2"}}))
	before := rawDump(t, r.f)
	must(t, r.apply(OpReplaceDisk, replace("b", "db", "db2")))
	if !reflectEqual(before, rawDump(t, r.f)) {
		t.Fatal("a retried replacement changed the state")
	}
	// b's leadership ends the usual way; c then leads at epoch 2.
	must(t, r.apply(OpElectLeader, ElectLeaderCmd{Topic: "s", Partition: 0, Epoch: 1, To: "c"}))
	if got := r.placement("s", 0); got.Owner != "c" || !slices.Equal(got.InSync, []string{"c"}) {
		t.Fatalf("s/0 after the election = %+v", got)
	}
}

// A member the leader adds back must be named with its recorded disk: an
// acknowledgement from the disk it replaced never re-admits it.
func TestSetInSyncNamesTheRecordedDisk(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	r.members(map[string]string{"a": "da", "b": "db", "c": "dc"})
	must(t, r.apply(OpReplaceDisk, ReplaceDiskCmd{Node: "b", Previous: "db", Disk: "db2"}))
	add := func(disks map[string]string) SetInSyncCmd {
		return SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b", "c"}, Disks: disks}
	}
	r.refused("the old disk", ErrConflict, OpSetInSync, add(map[string]string{"b": "db", "c": "dc"}))
	r.refused("no disk named", ErrConflict, OpSetInSync, add(nil))
	r.refused("another disk", ErrConflict, OpSetInSync, add(map[string]string{"b": "dz"}))
	// c is in the set already: its disk is not what is checked.
	must(t, r.apply(OpSetInSync, add(map[string]string{"b": "db2", "c": "stale"})))
	if got := r.placement("r", 0).InSync; !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("in sync %v after b's new disk fetched", got)
	}
}

// The upgrade gap: a member recorded before disk ids (none recorded) is
// added on the leader's word, as before.
func TestSetInSyncTakesAMemberWithoutADisk(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	must(t, r.apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "b", RaftAddr: "b:1"}}))
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "c"}}))
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b", "c"}}))
	if got := r.placement("r", 0).InSync; !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("in sync %v", got)
	}
}

// A leader whose own disk was replaced is out of the set: its word
// changes nothing until the controller elects another.
func TestSetInSyncRefusesALeaderOutsideTheSet(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	r.members(map[string]string{"a": "da"})
	must(t, r.apply(OpReplaceDisk, ReplaceDiskCmd{Node: "a", Previous: "da", Disk: "da2"}))
	r.refused("a leader whose disk was replaced", ErrConflict, OpSetInSync,
		SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b", "c"}, Disks: map[string]string{"a": "da2"}})
	r.refused("nor keeps the rest", ErrConflict, OpSetInSync,
		SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b"}})
}
