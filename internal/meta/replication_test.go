package meta

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// replFSM is a bare FSM holding "r" (RF 3, partition 0 on a,b,c at epoch
// 1, partition 1 unplaced) and "plain" (single copy on a).
type replFSM struct {
	t     *testing.T
	f     *fsm
	index uint64
}

func replicatedPlacement(p int, replicas ...string) Assignment {
	return Assignment{Topic: "r", Partition: p, Owner: replicas[0], Replicas: replicas,
		InSync: slices.Clone(replicas), LeaderEpoch: 1, EpochStarts: []EpochStart{{Epoch: 1, Offset: 0}}}
}

func newReplFSM(t *testing.T) *replFSM {
	r := &replFSM{t: t, f: newBareFSM(t)}
	top := plainTopic("r", 2)
	top.ReplicationFactor = 3
	must(t, r.apply(OpCreateTopic, CreateTopicCmd{Topic: top, Assignments: []Assignment{replicatedPlacement(0, "a", "b", "c")}}))
	must(t, r.apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("plain", 1), Assignments: []Assignment{{Partition: 0, Owner: "a"}}}))
	return r
}

func (r *replFSM) apply(op Op, payload any) error {
	r.t.Helper()
	r.index++
	return applyRaw(r.t, r.f, r.index, op, payload)
}

func (r *replFSM) placement(topic string, p int) Assignment {
	r.t.Helper()
	var as []Assignment
	must(r.t, r.f.view(func(tx *bolt.Tx) error {
		var err error
		as, err = readAssignments(tx, topic)
		return err
	}))
	return as[p]
}

// refused applies a command that must be refused with want, and checks
// it changed nothing at all.
func (r *replFSM) refused(what string, want error, op Op, payload any) {
	r.t.Helper()
	before := rawDump(r.t, r.f)
	if err := r.apply(op, payload); !errors.Is(err, want) {
		r.t.Fatalf("%s: %v, want %v", what, err, want)
	}
	if !reflectEqual(before, rawDump(r.t, r.f)) {
		r.t.Fatalf("%s: refused, yet the state changed", what)
	}
}

func reflectEqual(a, b map[string]string) bool { return reflect.DeepEqual(a, b) }

func TestSetInSync(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	set := func(epoch uint64, leader string, in ...string) SetInSyncCmd {
		return SetInSyncCmd{Topic: "r", Partition: 0, Epoch: epoch, Leader: leader, InSync: in}
	}
	r.refused("stale epoch", ErrConflict, OpSetInSync, set(2, "a", "a", "b"))
	r.refused("not the leader", ErrConflict, OpSetInSync, set(1, "b", "a", "b"))
	r.refused("without the leader", ErrInvalid, OpSetInSync, set(1, "a", "b", "c"))
	r.refused("a non-replica", ErrInvalid, OpSetInSync, set(1, "a", "a", "d"))
	r.refused("twice the same", ErrInvalid, OpSetInSync, set(1, "a", "a", "a"))
	r.refused("below a majority", ErrInvalid, OpSetInSync, set(1, "a", "a"))
	r.refused("a single-copy partition", ErrInvalid, OpSetInSync,
		SetInSyncCmd{Topic: "plain", Partition: 0, Epoch: 0, Leader: "a", InSync: []string{"a"}})
	r.refused("no such partition", ErrNotFound, OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 7, Epoch: 1, Leader: "a", InSync: []string{"a"}})

	must(t, r.apply(OpSetInSync, set(1, "a", "c", "a"))) // down to a majority, any order
	if got := r.placement("r", 0).InSync; !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("in sync %v, want [a c] (replica order)", got)
	}
	must(t, r.apply(OpSetInSync, set(1, "a", "a", "b", "c")))
	if got := r.placement("r", 0).InSync; !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("in sync %v after b rejoined", got)
	}
}

func TestStartEpoch(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	start := func(epoch uint64, leader string, off uint64) StartEpochCmd {
		return StartEpochCmd{Topic: "r", Partition: 0, Epoch: epoch, Leader: leader, Offset: off}
	}
	r.refused("another start of epoch 1", ErrConflict, OpStartEpoch, start(1, "a", 5))
	r.refused("stale epoch", ErrConflict, OpStartEpoch, start(2, "b", 5))
	must(t, r.apply(OpStartEpoch, start(1, "a", 0))) // a retry of the recorded start
	must(t, r.apply(OpElectLeader, ElectLeaderCmd{Topic: "r", Partition: 0, Epoch: 1, To: "b"}))
	r.refused("the old leader", ErrConflict, OpStartEpoch, start(2, "a", 5))
	must(t, r.apply(OpStartEpoch, start(2, "b", 5)))
	r.refused("a second start of epoch 2", ErrConflict, OpStartEpoch, start(2, "b", 6))
	if got := r.placement("r", 0).EpochStarts; !slices.Equal(got, []EpochStart{{1, 0}, {2, 5}}) {
		t.Fatalf("epoch starts %v", got)
	}
	// At most MaxEpochStarts are kept, the oldest dropped.
	for e := uint64(2); e < MaxEpochStarts+5; e++ {
		cur := r.placement("r", 0)
		to := cur.InSync[0]
		if to == cur.Owner {
			to = cur.InSync[1]
		}
		must(t, r.apply(OpElectLeader, ElectLeaderCmd{Topic: "r", Partition: 0, Epoch: e, To: to}))
		next := r.placement("r", 0)
		must(t, r.apply(OpStartEpoch, start(e+1, next.Owner, 10*e)))
		// Everyone back in sync for the next election.
		must(t, r.apply(OpSetInSync, set3(e+1, next.Owner)))
	}
	got := r.placement("r", 0).EpochStarts
	if len(got) != MaxEpochStarts || got[len(got)-1].Epoch != MaxEpochStarts+5 || got[0].Epoch != 6 {
		t.Fatalf("%d epoch starts, %v .. %v", len(got), got[0], got[len(got)-1])
	}
}

func set3(epoch uint64, leader string) SetInSyncCmd {
	return SetInSyncCmd{Topic: "r", Partition: 0, Epoch: epoch, Leader: leader, InSync: []string{"a", "b", "c"}}
}

func TestElectLeader(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	elect := func(epoch uint64, to string) ElectLeaderCmd {
		return ElectLeaderCmd{Topic: "r", Partition: 0, Epoch: epoch, To: to}
	}
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b"}}))
	r.refused("stale epoch", ErrConflict, OpElectLeader, elect(0, "b"))
	r.refused("the leader itself", ErrInvalid, OpElectLeader, elect(1, "a"))
	r.refused("out of sync", ErrConflict, OpElectLeader, elect(1, "c"))
	r.refused("not a replica", ErrConflict, OpElectLeader, elect(1, "d"))
	r.refused("a single-copy partition", ErrInvalid, OpElectLeader, ElectLeaderCmd{Topic: "plain", Partition: 0, Epoch: 0, To: "b"})
	must(t, r.apply(OpElectLeader, elect(1, "b")))
	got := r.placement("r", 0)
	if got.Owner != "b" || got.LeaderEpoch != 2 || !slices.Equal(got.InSync, []string{"b"}) ||
		!slices.Equal(got.Replicas, []string{"a", "b", "c"}) {
		t.Fatalf("after the election: %+v", got)
	}
	r.refused("the same election again", ErrConflict, OpElectLeader, elect(1, "b"))
	// The new leader may grow the set again from below a majority.
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "b", InSync: []string{"b", "c"}}))
}

// A leader renews its own epoch (a restart of its process): the epoch
// moves on, the leader and the in-sync set stay, and the new epoch's
// start is the leader's to record. Anyone else's word, a stale epoch or a
// leader outside the in-sync set changes nothing.
func TestRenewEpoch(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	renew := func(epoch uint64, leader string) RenewEpochCmd {
		return RenewEpochCmd{Topic: "r", Partition: 0, Epoch: epoch, Leader: leader}
	}
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b"}}))
	r.refused("stale epoch", ErrConflict, OpRenewEpoch, renew(0, "a"))
	r.refused("a future epoch", ErrConflict, OpRenewEpoch, renew(2, "a"))
	r.refused("a follower", ErrConflict, OpRenewEpoch, renew(1, "b"))
	r.refused("a single-copy partition", ErrInvalid, OpRenewEpoch, RenewEpochCmd{Topic: "plain", Partition: 0, Epoch: 0, Leader: "a"})
	before := r.placement("r", 0)
	must(t, r.apply(OpRenewEpoch, renew(1, "a")))
	got := r.placement("r", 0)
	if got.Owner != "a" || got.LeaderEpoch != 2 || !slices.Equal(got.InSync, []string{"a", "b"}) ||
		!slices.Equal(got.Replicas, before.Replicas) || !slices.Equal(got.EpochStarts, before.EpochStarts) ||
		got.InSyncVersion != before.InSyncVersion {
		t.Fatalf("after the renewal: %+v (before %+v)", got, before)
	}
	r.refused("the same renewal again", ErrConflict, OpRenewEpoch, renew(1, "a"))
	r.refused("a start for the old epoch", ErrConflict, OpStartEpoch, StartEpochCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", Offset: 9})
	must(t, r.apply(OpStartEpoch, StartEpochCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "a", Offset: 9}))

	// A leader whose disk was replaced is out of the in-sync set: it
	// does not renew, another is elected.
	must(t, r.apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "a", DiskID: "d1"}}))
	must(t, r.apply(OpReplaceDisk, ReplaceDiskCmd{Node: "a", Previous: "d1", Disk: "d2"}))
	if got := r.placement("r", 0); slices.Contains(got.InSync, "a") {
		t.Fatalf("in-sync set after the leader's disk was replaced: %v", got.InSync)
	}
	r.refused("a leader out of the in-sync set", ErrConflict, OpRenewEpoch, renew(2, "a"))
}

func TestSetReplicas(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	reps := func(topic string, epoch uint64, ids ...string) SetReplicasCmd {
		return SetReplicasCmd{Topic: topic, Partition: 0, Epoch: epoch, Replicas: ids}
	}
	r.refused("stale epoch", ErrConflict, OpSetReplicas, reps("r", 2, "a", "b"))
	r.refused("without the leader", ErrInvalid, OpSetReplicas, reps("r", 1, "b", "c"))
	r.refused("twice the same", ErrInvalid, OpSetReplicas, reps("r", 1, "a", "a"))
	r.refused("none", ErrInvalid, OpSetReplicas, reps("r", 1))
	r.refused("too many", ErrInvalid, OpSetReplicas, reps("r", 1, "a", "b", "c", "d", "e", "f"))
	r.refused("unplaced", ErrConflict, OpSetReplicas, SetReplicasCmd{Topic: "r", Partition: 1, Epoch: 0, Replicas: []string{"a"}})
	// In sync a and c only: dropping c leaves 1 of 2, below a majority.
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "c"}}))
	r.refused("trimmed below a majority", ErrConflict, OpSetReplicas, reps("r", 1, "a", "b"))
	// Dropping b (out of sync) keeps both in-sync members.
	must(t, r.apply(OpSetReplicas, reps("r", 1, "a", "c")))
	if got := r.placement("r", 0); !slices.Equal(got.Replicas, []string{"a", "c"}) || !slices.Equal(got.InSync, []string{"a", "c"}) || got.LeaderEpoch != 1 {
		t.Fatalf("after removing b: %+v", got)
	}
	// Adding d: it joins out of sync.
	must(t, r.apply(OpSetReplicas, reps("r", 1, "a", "c", "d")))
	if got := r.placement("r", 0); !slices.Equal(got.InSync, []string{"a", "c"}) {
		t.Fatalf("a new member is in sync at once: %+v", got)
	}

	// A single-copy partition becomes replicated at epoch 1, with no
	// start: its leader records one at its log end.
	must(t, r.apply(OpSetReplicas, reps("plain", 0, "a", "b")))
	got := r.placement("plain", 0)
	if got.Owner != "a" || !slices.Equal(got.Replicas, []string{"a", "b"}) || !slices.Equal(got.InSync, []string{"a"}) ||
		got.LeaderEpoch != 1 || len(got.EpochStarts) != 0 {
		t.Fatalf("plain raised to 2 copies: %+v", got)
	}
	must(t, r.apply(OpStartEpoch, StartEpochCmd{Topic: "plain", Partition: 0, Epoch: 1, Leader: "a", Offset: 40}))
}

// A placement written by a create, a growth or the controller has the
// replicated shape or none of it.
func TestPlacementShapeIsChecked(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	good := replicatedPlacement(1, "b", "c", "a")
	bad := map[string]func(a *Assignment){
		"leader not a replica": func(a *Assignment) { a.Owner = "d" },
		"replicas twice":       func(a *Assignment) { a.Replicas = []string{"b", "b"}; a.InSync = []string{"b"} },
		"in sync not replicas": func(a *Assignment) { a.InSync = []string{"b", "d"} },
		"leader not in sync":   func(a *Assignment) { a.InSync = []string{"c"} },
		"no epoch":             func(a *Assignment) { a.LeaderEpoch = 0 },
		"starts past epoch":    func(a *Assignment) { a.EpochStarts = []EpochStart{{Epoch: 2}} },
		"moving":               func(a *Assignment) { a.Target = "d" },
		"unplaced":             func(a *Assignment) { a.Owner = "" },
		"fields, no replicas":  func(a *Assignment) { a.Replicas = nil },
		"a leaving copy":       func(a *Assignment) { a.Leaving = "c" },
		"6 replicas": func(a *Assignment) {
			a.Replicas = []string{"b", "c", "a", "d", "e", "f"}
		},
		"an epoch started twice": func(a *Assignment) {
			a.LeaderEpoch, a.EpochStarts = 2, []EpochStart{{Epoch: 1}, {Epoch: 2, Offset: 3}, {Epoch: 2, Offset: 4}}
		},
		"too many epoch starts": func(a *Assignment) {
			a.LeaderEpoch, a.EpochStarts = MaxEpochStarts+1, nil
			for e := uint64(1); e <= MaxEpochStarts+1; e++ {
				a.EpochStarts = append(a.EpochStarts, EpochStart{Epoch: e, Offset: e})
			}
		},
	}
	for name, spoil := range bad {
		a := good
		a.Replicas, a.InSync = slices.Clone(good.Replicas), slices.Clone(good.InSync)
		spoil(&a)
		r.refused(name, ErrInvalid, OpSetAssignments, SetAssignmentsCmd{Assignments: []Assignment{a}})
	}
	// The limits themselves are allowed: 5 replicas, 32 epoch starts.
	most := good
	most.Replicas = []string{"b", "c", "a", "d", "e"}
	most.LeaderEpoch = MaxEpochStarts
	most.EpochStarts = nil
	for e := uint64(1); e <= MaxEpochStarts; e++ {
		most.EpochStarts = append(most.EpochStarts, EpochStart{Epoch: e, Offset: e})
	}
	if err := CheckPlacement("r", most); err != nil {
		t.Fatalf("a placement at the limits: %v", err)
	}
	must(t, r.apply(OpSetAssignments, SetAssignmentsCmd{Assignments: []Assignment{good}}))
	r.refused("a move of a replicated partition", ErrInvalid, OpSetTarget, SetTargetCmd{Topic: "r", Partition: 0, Owner: "a", Target: "d"})
	top := plainTopic("far", 0)
	top.Remote, top.ReplicationFactor = &RemoteTarget{URL: "http://x", Topic: "y"}, 2
	r.refused("a replicated remote child", ErrInvalid, OpCreateTopic, CreateTopicCmd{Topic: top, Attach: spec("plain", "e1")})
	r.refused("factor 6", ErrInvalid, OpUpdateTopic, TopicUpdate{Name: "r", ReplicationFactor: ptr(6)})
	must(t, r.apply(OpUpdateTopic, TopicUpdate{Name: "r", ReplicationFactor: ptr(2)}))
}

// The replication fields, a leaving copy's mark too, survive a snapshot
// and restore.
func TestReplicationSurvivesSnapshot(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	top := plainTopic("r", 1)
	top.ReplicationFactor = 3
	must(t, s.CreateTopic(ctx, top, []Assignment{replicatedPlacement(0, "n1", "b", "c")}, nil))
	must(t, s.ElectLeader(ctx, "r", 0, 1, "b"))
	must(t, s.StartEpoch(ctx, "r", 0, 2, "b", 9))
	must(t, s.SetInSync(ctx, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "b", InSync: []string{"b", "c"}}))
	must(t, s.SetReplicas(ctx, "r", 0, 2, []string{"n1", "b", "c", "d"}, "c"))
	want := dump(t, s.fsm)
	got := dump(t, restoredCopy(t, s.fsm))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("restored state differs\n got %+v\nwant %+v", got, want)
	}
	a := got.Assign["r"][0]
	if a.Owner != "b" || a.LeaderEpoch != 2 || !slices.Equal(a.InSync, []string{"b", "c"}) ||
		!slices.Equal(a.EpochStarts, []EpochStart{{1, 0}, {2, 9}}) || got.Topics[0].ReplicationFactor != 3 ||
		a.Leaving != "c" || len(a.Replicas) != 4 {
		t.Fatalf("restored placement %+v, topic %+v", a, got.Topics[0])
	}
}

// A member joins the in-sync set only with evidence that it holds
// everything committed (issue: a wiped follower re-admitted empty by a
// leader whose view still showed it in sync): the leader's view must be
// the set now (From), and the member's acknowledged end on the named
// disk must reach the committed point and the epoch's start.
func TestSetInSyncAddsOnlyWithEvidence(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	must(t, r.apply(OpStartEpoch, StartEpochCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", Offset: 0}))
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b"},
		From: []string{"a", "b", "c"}, Committed: 4}))
	add := func(from []string, committed uint64, acked map[string]uint64) SetInSyncCmd {
		return SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b", "c"},
			From: from, FromVersion: 1, Committed: committed, Acked: acked}
	}
	// The metastore's set is [a b]: a leader whose view still shows c
	// in sync keeps it without evidence; that is an addition.
	r.refused("a stale view", ErrConflict, OpSetInSync, add([]string{"a", "b", "c"}, 5, map[string]uint64{"b": 5}))
	r.refused("a stale view, even with evidence", ErrConflict, OpSetInSync, add([]string{"a", "c"}, 5, map[string]uint64{"b": 5, "c": 5}))
	r.refused("acknowledged below the committed point", ErrConflict, OpSetInSync, add([]string{"b", "a"}, 5, map[string]uint64{"b": 5, "c": 4}))
	r.refused("no acknowledgement", ErrConflict, OpSetInSync, add([]string{"a", "b"}, 5, map[string]uint64{"b": 5}))
	stale := add([]string{"b", "a"}, 5, map[string]uint64{"b": 5, "c": 5})
	stale.FromVersion = 0
	r.refused("decided before the last change", ErrConflict, OpSetInSync, stale)
	must(t, r.apply(OpSetInSync, add([]string{"b", "a"}, 5, map[string]uint64{"b": 5, "c": 5})))
	if got := r.placement("r", 0); !slices.Equal(got.InSync, []string{"a", "b", "c"}) || got.InSyncVersion != 2 {
		t.Fatalf("in sync %v at version %d, want c back with its evidence, version 2", got.InSync, got.InSyncVersion)
	}
	// A restatement changes no member but raises the version: a proposal
	// the leader made before it (from a process that since restarted, or
	// overtaken in flight) is fenced by it.
	restate := SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b", "c"},
		From: []string{"a", "b", "c"}, FromVersion: 2}
	late := restate
	late.InSync = []string{"a", "b"}
	must(t, r.apply(OpSetInSync, restate))
	r.refused("a proposal overtaken by a restatement", ErrConflict, OpSetInSync, late)
	if got := r.placement("r", 0).InSyncVersion; got != 3 {
		t.Fatalf("version %d after a restatement, want 3", got)
	}

	// The epoch's start is a floor too: a member that has not fetched up
	// to it may hold a tail of an older epoch below it.
	must(t, r.apply(OpElectLeader, ElectLeaderCmd{Topic: "r", Partition: 0, Epoch: 1, To: "b"}))
	must(t, r.apply(OpStartEpoch, StartEpochCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "b", Offset: 9}))
	readd := SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "b", InSync: []string{"a", "b", "c"},
		From: []string{"b", "c"}, FromVersion: 3, Committed: 3, Acked: map[string]uint64{"a": 8, "c": 9}}
	r.refused("acknowledged below the epoch's start", ErrConflict, OpSetInSync, readd)
	readd.Acked["a"] = 9
	must(t, r.apply(OpSetInSync, readd))

	// A command from before From (the upgrade gap) is checked as then:
	// disks only.
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "b", InSync: []string{"b", "c"}}))
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "b", InSync: []string{"a", "b", "c"}}))
}

// A node that leads again, at a later epoch, cannot have a proposal of
// its earlier leadership applied: the proposer's epoch must be the
// current one, not merely one it led.
func TestReplicationRefusesAnOlderEpochOfTheSameLeader(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	must(t, r.apply(OpElectLeader, ElectLeaderCmd{Topic: "r", Partition: 0, Epoch: 1, To: "b"}))
	must(t, r.apply(OpStartEpoch, StartEpochCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "b", Offset: 3}))
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "b", InSync: []string{"a", "b", "c"}}))
	must(t, r.apply(OpElectLeader, ElectLeaderCmd{Topic: "r", Partition: 0, Epoch: 2, To: "a"})) // a leads again, at epoch 3
	r.refused("in-sync change of a's epoch 1", ErrConflict, OpSetInSync,
		SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "c"}})
	r.refused("epoch start of a's epoch 1", ErrConflict, OpStartEpoch,
		StartEpochCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", Offset: 7})
	r.refused("in-sync change of b's epoch 2", ErrConflict, OpSetInSync,
		SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 2, Leader: "b", InSync: []string{"b", "c"}})
	must(t, r.apply(OpStartEpoch, StartEpochCmd{Topic: "r", Partition: 0, Epoch: 3, Leader: "a", Offset: 5}))
}
