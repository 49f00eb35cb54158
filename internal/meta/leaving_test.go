package meta

import (
	"encoding/json"
	"slices"
	"testing"
)

func moveCmd(epoch uint64, leaving string, replicas ...string) SetReplicasCmd {
	return SetReplicasCmd{Topic: "r", Partition: 0, Epoch: epoch, Replicas: replicas, Leaving: leaving}
}

// TestLeavingMarkRule: a copy starts leaving only with its replacement
// added, one at a time; while it is listed every change names it; it is
// cleared when the copy goes or when the move is called off (waiting for
// the replacement to be in sync is the controller's rule; the metastore
// keeps a majority in sync, as for any change). Each refusal changes nothing.
func TestLeavingMarkRule(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	r.refused("a single copy", ErrInvalid, OpSetReplicas,
		SetReplicasCmd{Topic: "plain", Partition: 0, Epoch: 0, Replicas: []string{"a", "b"}, Leaving: "a"})
	r.refused("no replacement added", ErrInvalid, OpSetReplicas, moveCmd(1, "b", "a", "b", "c"))
	r.refused("another copy dropped meanwhile", ErrInvalid, OpSetReplicas, moveCmd(1, "b", "a", "b", "d", "e"))
	r.refused("a copy that is not a replica", ErrInvalid, OpSetReplicas, moveCmd(1, "e", "a", "b", "c", "d"))
	r.refused("the replacement named as leaving", ErrInvalid, OpSetReplicas, moveCmd(1, "d", "a", "b", "c", "d"))
	r.refused("the leaving copy dropped at once", ErrInvalid, OpSetReplicas, moveCmd(1, "b", "a", "c", "d"))
	r.refused("a stale epoch", ErrConflict, OpSetReplicas, moveCmd(2, "b", "a", "b", "c", "d"))

	must(t, r.apply(OpSetReplicas, moveCmd(1, "b", "a", "b", "c", "d")))
	got := r.placement("r", 0)
	if got.Leaving != "b" || !slices.Equal(got.Replicas, []string{"a", "b", "c", "d"}) || !slices.Equal(got.InSync, []string{"a", "b", "c"}) {
		t.Fatalf("after the move started: %+v", got)
	}
	// The factor reconcile's shrink, unaware of the move, would drop the
	// replacement (out of sync): refused.
	r.refused("the replacement dropped, the mark not named", ErrConflict, OpSetReplicas, moveCmd(1, "", "a", "b", "c"))
	r.refused("a second copy leaving", ErrConflict, OpSetReplicas, moveCmd(1, "c", "a", "b", "c", "d", "e"))
	// A change that keeps the copy and names it is taken (the factor
	// raised meanwhile: one more replacement).
	must(t, r.apply(OpSetReplicas, moveCmd(1, "b", "a", "b", "c", "d", "e")))
	must(t, r.apply(OpSetInSync, SetInSyncCmd{Topic: "r", Partition: 0, Epoch: 1, Leader: "a", InSync: []string{"a", "b", "c", "d", "e"}}))
	// An election keeps the mark.
	must(t, r.apply(OpElectLeader, ElectLeaderCmd{Topic: "r", Partition: 0, Epoch: 1, To: "c"}))
	if got := r.placement("r", 0); got.Leaving != "b" || got.Owner != "c" {
		t.Fatalf("after an election: %+v", got)
	}
	must(t, r.apply(OpSetReplicas, moveCmd(2, "", "c", "d", "e")))
	if got := r.placement("r", 0); got.Leaving != "" || !slices.Equal(got.Replicas, []string{"c", "d", "e"}) {
		t.Fatalf("after the leaving copy went: %+v", got)
	}
	// Now unmarked: a factor change may shape the replicas freely again.
	must(t, r.apply(OpSetReplicas, moveCmd(2, "", "c", "d")))
}

// TestLeavingMoveCalledOff: a change with the same replicas and no mark
// calls the move off; the copy that was leaving is then an ordinary
// replica, and the surplus copy the factor reconcile's to drop.
func TestLeavingMoveCalledOff(t *testing.T) {
	t.Parallel()
	r := newReplFSM(t)
	must(t, r.apply(OpSetReplicas, moveCmd(1, "a", "a", "b", "c", "d")))
	r.refused("the leader, leaving, as the only copy", ErrInvalid, OpSetReplicas, moveCmd(1, "a", "a"))
	must(t, r.apply(OpSetReplicas, moveCmd(1, "", "a", "b", "c", "d")))
	if got := r.placement("r", 0); got.Leaving != "" || len(got.Replicas) != 4 {
		t.Fatalf("after the move was called off: %+v", got)
	}
	must(t, r.apply(OpSetReplicas, moveCmd(1, "", "a", "b", "c")))
}

// TestLeavingFieldJSON: without a mark the placement and the command
// encode byte for byte as before the field; a record written before it
// reads unmarked; a mark round-trips.
func TestLeavingFieldJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(SetReplicasCmd{Topic: "r", Partition: 0, Epoch: 1, Replicas: []string{"a", "b"}})
	must(t, err)
	if want := `{"topic":"r","partition":0,"epoch":1,"replicas":["a","b"]}`; string(b) != want {
		t.Fatalf("command without a mark: %s, want %s", b, want)
	}
	old := `{"topic":"r","partition":0,"owner":"a","replicas":["a","b"],"in_sync":["a","b"],"leader_epoch":1}`
	var a Assignment
	must(t, json.Unmarshal([]byte(old), &a))
	if a.Leaving != "" {
		t.Fatalf("a record from before the field reads %+v", a)
	}
	if b, _ := json.Marshal(a); string(b) != old {
		t.Fatalf("re-encoded %s, want %s", b, old)
	}
	a.Leaving = "b"
	b, err = json.Marshal(a)
	must(t, err)
	var back Assignment
	must(t, json.Unmarshal(b, &back))
	if !back.Equal(a) {
		t.Fatalf("round trip %s gave %+v", b, back)
	}
	if back.Leaving = ""; back.Equal(a) {
		t.Fatal("Equal ignores the mark")
	}
}
