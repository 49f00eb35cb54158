package meta

import (
	"encoding/json"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func bareUser(t *testing.T, f *fsm, name string) (User, bool) {
	t.Helper()
	var u User
	var ok bool
	must(t, f.view(func(tx *bolt.Tx) error {
		var err error
		u, ok, err = readUser(tx, name)
		return err
	}))
	return u, ok
}

func bareTopic(t *testing.T, f *fsm, name string) Topic {
	t.Helper()
	var top Topic
	must(t, f.view(func(tx *bolt.Tx) error {
		var ok bool
		var err error
		top, ok, err = readTopic(tx, name)
		if err == nil && !ok {
			t.Fatalf("topic %q missing", name)
		}
		return err
	}))
	return top
}

// A user is an incarnation, not a name: the ID is the creating command's
// index, kept through every change, and a user deleted and created again
// under the same name is another user who owns none of the old one's
// topics.
func TestOwnershipFollowsTheIncarnation(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	wantErr(t, applyRaw(t, f, 10, OpPutUser, PutUserCmd{User: testUser("alice")}), nil)
	if u, _ := bareUser(t, f, "alice"); u.ID != 10 {
		t.Fatalf("alice created at index 10 has ID %d", u.ID)
	}
	wantErr(t, applyRaw(t, f, 11, OpSetGrants, SetGrantsCmd{Name: "alice", Grants: []Grant{{Action: ActionCreate, Patterns: []string{"a.*"}}}}), nil)
	wantErr(t, applyRaw(t, f, 12, OpSetPassword, SetPasswordCmd{Name: "alice", Hash: []byte("other")}), nil)
	if u, _ := bareUser(t, f, "alice"); u.ID != 10 || u.Version != 12 {
		t.Fatalf("after changes alice has ID %d version %d, want ID 10 version 12", u.ID, u.Version)
	}

	// A proposer's owner_id is not trusted: the FSM binds the owner's ID.
	forged := plainTopic("a.jobs", 1)
	forged.Owner, forged.OwnerID = "alice", 999
	wantErr(t, applyRaw(t, f, 13, OpCreateTopic, CreateTopicCmd{Topic: forged}), nil)
	top := bareTopic(t, f, "a.jobs")
	if top.OwnerID != 10 || !top.OwnedBy("alice", 10) || top.OwnedBy("alice", 999) {
		t.Fatalf("topic created by alice#10: owner %q id %d", top.Owner, top.OwnerID)
	}

	wantErr(t, applyRaw(t, f, 14, OpDeleteUser, DeleteUserCmd{Name: "alice"}), nil)
	wantErr(t, applyRaw(t, f, 15, OpPutUser, PutUserCmd{User: testUser("alice")}), nil)
	again, _ := bareUser(t, f, "alice")
	if again.ID != 15 {
		t.Fatalf("re-created alice has ID %d, want 15", again.ID)
	}
	if top := bareTopic(t, f, "a.jobs"); top.OwnedBy(again.Name, again.ID) {
		t.Fatal("the re-created alice owns the deleted alice's topic")
	}
	// A topic whose owner is gone when the create applies binds to no one.
	gone := plainTopic("ghost", 1)
	gone.Owner = "ghost"
	wantErr(t, applyRaw(t, f, 16, OpCreateTopic, CreateTopicCmd{Topic: gone}), nil)
	wantErr(t, applyRaw(t, f, 17, OpPutUser, PutUserCmd{User: testUser("ghost")}), nil)
	ghost, _ := bareUser(t, f, "ghost")
	if bareTopic(t, f, "ghost").OwnedBy(ghost.Name, ghost.ID) {
		t.Fatal("a user created after the topic owns it")
	}
}

func TestSeedAdminGetsAnID(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	wantErr(t, applyRaw(t, f, 7, OpSeedAdmin, SeedAdminCmd{User: testUser("admin", Grant{Action: ActionAdmin, Patterns: []string{"*"}})}), nil)
	if u, _ := bareUser(t, f, "admin"); u.ID != 7 {
		t.Fatalf("seeded admin has ID %d, want 7", u.ID)
	}
}

// A metastore written before IDs existed: users without "id" and topics
// without "owner_id". The legacy owner keeps its topics, by name, for as
// long as it is that same record; once deleted, a new user of the name
// (which gets an ID) does not inherit them.
func TestLegacyOwnersKeepTheirTopicsUntilDeleted(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	must(t, f.db.Update(func(tx *bolt.Tx) error {
		// The exact shapes the previous binary wrote.
		old, err := json.Marshal(map[string]any{"name": "bob", "hash": []byte("h"), "grants": []Grant{},
			"created_at": 1, "version": 5})
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketUsers).Put([]byte("bob"), old); err != nil {
			return err
		}
		legacy := plainTopic("bob.jobs", 1)
		legacy.Owner, legacy.Version = "bob", 6
		raw, err := encodeTopic(legacy)
		if err != nil {
			return err
		}
		if containsKey(raw[8:], "owner_id") {
			t.Fatalf("a legacy topic record must carry no owner_id: %s", raw[8:])
		}
		return tx.Bucket(bucketTopics).Put([]byte("bob.jobs"), raw)
	}))
	bob, _ := bareUser(t, f, "bob")
	if bob.ID != LegacyUserID || !bareTopic(t, f, "bob.jobs").OwnedBy("bob", bob.ID) {
		t.Fatalf("legacy bob (ID %d) does not own his legacy topic", bob.ID)
	}
	// Changes keep the legacy ID, and so the ownership.
	wantErr(t, applyRaw(t, f, 20, OpSetPassword, SetPasswordCmd{Name: "bob", Hash: []byte("h2")}), nil)
	if bob, _ = bareUser(t, f, "bob"); !bareTopic(t, f, "bob.jobs").OwnedBy("bob", bob.ID) {
		t.Fatalf("a password change cost legacy bob his topic (ID now %d)", bob.ID)
	}
	// A topic legacy bob creates now is bound to the same legacy ID.
	mine := plainTopic("bob.new", 1)
	mine.Owner = "bob"
	wantErr(t, applyRaw(t, f, 21, OpCreateTopic, CreateTopicCmd{Topic: mine}), nil)
	wantErr(t, applyRaw(t, f, 22, OpDeleteUser, DeleteUserCmd{Name: "bob"}), nil)
	wantErr(t, applyRaw(t, f, 23, OpPutUser, PutUserCmd{User: testUser("bob")}), nil)
	bob, _ = bareUser(t, f, "bob")
	for _, name := range []string{"bob.jobs", "bob.new"} {
		if bareTopic(t, f, name).OwnedBy("bob", bob.ID) {
			t.Fatalf("the re-created bob (ID %d) owns %s", bob.ID, name)
		}
	}
}

func containsKey(js []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(js, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

func TestHasUsers(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	if s.HasUsers() {
		t.Fatal("a fresh metastore has users")
	}
	must(t, s.CreateUser(testCtx(t), testUser("alice")))
	if !s.HasUsers() {
		t.Fatal("HasUsers false after a create")
	}
}
