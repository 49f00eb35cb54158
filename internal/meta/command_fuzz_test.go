package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// FuzzDecodeCommand feeds arbitrary Raft entries — what a peer's log or a
// command forwarded to the leader can carry — through DecodeCommand and
// into Apply, on two FSMs kept in lockstep. It checks the FSM's promises
// (doc.go) for every input, not only that nothing panics:
//
//   - DecodeCommand is Encode's exact inverse on any non-empty input, and
//     refuses the empty one as ErrInvalid;
//   - Apply is deterministic: both replicas give the same answer and hold
//     the same bytes afterwards;
//   - a refused command changes nothing, not even the applied index.
//
// State builds up across inputs (the seeds create topics, users, members),
// so later inputs hit handlers with something to conflict with.
func FuzzDecodeCommand(f *testing.F) {
	seed := func(op Op, payload any) {
		cmd, err := NewCommand(op, payload)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(cmd.Encode())
	}
	seed(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("parent", 2),
		Assignments: []Assignment{{Topic: "parent", Partition: 0, Owner: "n1"}, {Topic: "parent", Partition: 1, Owner: "n1"}}})
	seed(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("child", 1), Attach: &AttachSpec{Parent: "parent", Epoch: "e1"}})
	seed(OpAttach, AttachCmd{Child: "child", AttachSpec: AttachSpec{Parent: "parent", Epoch: "e2", AttachOffsets: []uint64{0, 4}, DelayMs: 5}})
	seed(OpSetLinkFilter, SetLinkFilterCmd{Parent: "parent", Child: "child", Epoch: "e2", Filter: json.RawMessage(`{"k":["v"]}`), FilterScope: FilterPayload})
	seed(OpSetLinkFilter, SetLinkFilterCmd{Parent: "parent", Child: "child"})
	seed(OpDetach, DetachCmd{Parent: "parent", Child: "child", Epoch: "e2"})
	seed(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "n1", RaftAddr: "127.0.0.1:1", State: MemberAlive}})
	seed(OpSetAssignments, SetAssignmentsCmd{Assignments: []Assignment{{Topic: "parent", Partition: 1, Owner: "n2"}}})
	seed(OpSeedAdmin, SeedAdminCmd{User: User{Name: "root", Hash: []byte("h"), Grants: []Grant{{Action: "admin", Patterns: []string{"*"}}}}})
	seed(OpPutUser, PutUserCmd{User: User{Name: "alice", Hash: []byte("h")}})
	seed(OpSetGrants, SetGrantsCmd{Name: "alice", Grants: []Grant{{Action: "produce", Patterns: []string{"orders.*"}}}})
	seed(OpSetLimits, SetLimitsCmd{Name: "alice", Limits: &Limits{ProduceRecordsPerS: ptr(int64(5))}})
	seed(OpDeleteUser, DeleteUserCmd{Name: "alice"})
	repl := plainTopic("repl", 1)
	repl.ReplicationFactor = 3
	seed(OpCreateTopic, CreateTopicCmd{Topic: repl, Assignments: []Assignment{{Topic: "repl", Partition: 0, Owner: "n1",
		Replicas: []string{"n1", "n2", "n3"}, InSync: []string{"n1", "n2", "n3"}, LeaderEpoch: 1, EpochStarts: []EpochStart{{1, 0}}}}})
	seed(OpSetInSync, SetInSyncCmd{Topic: "repl", Partition: 0, Epoch: 1, Leader: "n1", InSync: []string{"n1", "n3"}})
	seed(OpStartEpoch, StartEpochCmd{Topic: "repl", Partition: 0, Epoch: 1, Leader: "n1", Offset: 0})
	seed(OpElectLeader, ElectLeaderCmd{Topic: "repl", Partition: 0, Epoch: 1, To: "n3"})
	seed(OpStartEpoch, StartEpochCmd{Topic: "repl", Partition: 0, Epoch: 2, Leader: "n3", Offset: 7})
	seed(OpRenewEpoch, RenewEpochCmd{Topic: "repl", Partition: 0, Epoch: 2, Leader: "n3"})
	seed(OpSetReplicas, SetReplicasCmd{Topic: "repl", Partition: 0, Epoch: 2, Replicas: []string{"n3", "n1", "n4"}})
	seed(OpSetReplicas, SetReplicasCmd{Topic: "repl", Partition: 0, Epoch: 2, Replicas: []string{"n3", "n1", "n4", "n5"}, Leaving: "n1"})
	seed(OpSetReplicas, SetReplicasCmd{Topic: "repl", Partition: 0, Epoch: 2, Replicas: []string{"n3", "n4", "n5"}})
	seed(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "n3", RaftAddr: "127.0.0.1:3", DiskID: "d1"}})
	seed(OpReplaceDisk, ReplaceDiskCmd{Node: "n3", Previous: "d1", Disk: "d2"})
	seed(OpSetInSync, SetInSyncCmd{Topic: "repl", Partition: 0, Epoch: 2, Leader: "n3", InSync: []string{"n3", "n1"},
		Disks: map[string]string{"n1": "d9"}})
	seed(OpUpdateTopic, TopicUpdate{Name: "repl", ReplicationFactor: ptr(2)})
	seed(OpUpdateTopic, TopicUpdate{Name: "parent", Partitions: ptr(3)})
	seed(OpDeleteTopic, DeleteTopicCmd{Name: "parent"})
	f.Add([]byte{})
	f.Add([]byte{200, '{', '}'})
	f.Add(append([]byte{byte(OpDeleteTopic)}, `{"name":"x"} {}`...))

	a, b := newBareFSM(f), newBareFSM(f)
	var index uint64
	f.Fuzz(func(t *testing.T, data []byte) {
		cmd, err := DecodeCommand(data)
		if len(data) == 0 {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("empty command: %v, want ErrInvalid", err)
			}
		} else if err != nil || !bytes.Equal(cmd.Encode(), data) {
			t.Fatalf("DecodeCommand(%q) = %+v, %v: not Encode's inverse", data, cmd, err)
		}

		index++
		before := rawDump(t, a)
		ra := a.Apply(&raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data})
		rb := b.Apply(&raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data})
		if fmt.Sprint(ra) != fmt.Sprint(rb) {
			t.Fatalf("replicas disagree on %q: %v vs %v", data, ra, rb)
		}
		after := rawDump(t, a)
		if !maps.Equal(after, rawDump(t, b)) {
			t.Fatalf("replicas hold different state after %q", data)
		}
		if _, refused := ra.(error); refused && !maps.Equal(before, after) {
			t.Fatalf("refused command %q (%v) changed the database", data, ra)
		}
	})
}

// rawDump is every key of every bucket of the FSM's database, so two
// states compare byte for byte (users, versions and the applied index
// included).
func rawDump(t testing.TB, f *fsm) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := f.view(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
			return bk.ForEach(func(k, v []byte) error {
				out[string(name)+"/"+string(k)] = string(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
