package meta

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func testKey(id string) AccessKey {
	return AccessKey{ID: id, CreatedAt: 1700000000, Sealed: []byte("sealed:" + id)}
}

const (
	keyA = "NKIAAAAAAAAAAAAAAAAA"
	keyB = "NKIABBBBBBBBBBBBBBBB"
	keyC = "NKIACCCCCCCCCCCCCCCC"
)

// Keys are added one at a time, at most MaxAccessKeys per user, an ID
// names one key in the cluster, and they go with their user.
func TestAccessKeyLifecycle(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.CreateUser(ctx, testUser("alice")))
	must(t, s.CreateUser(ctx, testUser("bob")))

	must(t, s.AddAccessKey(ctx, "alice", testKey(keyA)))
	v := s.UsersVersion()
	must(t, s.AddAccessKey(ctx, "alice", testKey(keyB)))
	if s.UsersVersion() <= v {
		t.Fatal("adding a key did not move the users version")
	}
	if err := s.AddAccessKey(ctx, "alice", testKey(keyC)); !errors.Is(err, ErrConflict) {
		t.Fatalf("a third key: %v, want ErrConflict", err)
	}
	if err := s.AddAccessKey(ctx, "bob", testKey(keyA)); !errors.Is(err, ErrExists) {
		t.Fatalf("alice's key id for bob: %v, want ErrExists", err)
	}
	if err := s.AddAccessKey(ctx, "carol", testKey(keyC)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a key for nobody: %v, want ErrNotFound", err)
	}
	for _, bad := range []AccessKey{{ID: "AKIAAAAAAAAAAAAAAAAA", Sealed: []byte("x")}, {ID: "NKIA0000000000000000", Sealed: []byte("x")}, {ID: keyC}} {
		if err := s.AddAccessKey(ctx, "bob", bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("key %+v: %v, want ErrInvalid", bad, err)
		}
	}

	// Other changes to the record keep the keys.
	must(t, s.SetPassword(ctx, "alice", []byte("other-hash")))
	u, _ := s.User("alice")
	if len(u.AccessKeys) != 2 || u.AccessKeys[0].ID != keyA || string(u.AccessKeys[1].Sealed) != "sealed:"+keyB {
		t.Fatalf("alice's keys: %+v", u.AccessKeys)
	}

	must(t, s.DeleteAccessKey(ctx, "alice", keyA))
	if err := s.DeleteAccessKey(ctx, "alice", keyA); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting it again: %v, want ErrNotFound", err)
	}
	if err := s.DeleteAccessKey(ctx, "bob", keyB); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting alice's key as bob's: %v, want ErrNotFound", err)
	}
	must(t, s.AddAccessKey(ctx, "bob", testKey(keyA))) // freed
	must(t, s.DeleteUser(ctx, "alice"))
	must(t, s.AddAccessKey(ctx, "bob", testKey(keyB))) // went with alice
	must(t, s.CreateUser(ctx, testUser("alice")))
	if u, _ := s.User("alice"); len(u.AccessKeys) != 0 {
		t.Fatalf("a re-created alice holds the old one's keys: %+v", u.AccessKeys)
	}
}

// A new user carries no keys: they come one at a time, each checked.
func TestNewUserHoldsNoKeys(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	u := testUser("alice")
	u.AccessKeys = []AccessKey{testKey(keyA)}
	if err := s.CreateUser(testCtx(t), u); !errors.Is(err, ErrInvalid) {
		t.Fatalf("create with a key: %v, want ErrInvalid", err)
	}
}

// A user without keys encodes as before keys existed, so commands and
// records written by older binaries read the same, and theirs ours.
func TestUserWithoutKeysEncodesAsBefore(t *testing.T) {
	js, err := json.Marshal(PutUserCmd{User: testUser("alice")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "access_keys") {
		t.Fatalf("a user without keys encodes them: %s", js)
	}
	var c PutUserCmd
	old := `{"user":{"name":"alice","hash":"aGFzaA==","grants":[],"created_at":1}}`
	if err := decodePayload(OpPutUser, json.RawMessage(old), &c); err != nil || c.User.AccessKeys != nil {
		t.Fatalf("an old put-user: %v %+v", err, c.User)
	}
}
