package auth

import (
	"sort"
	"testing"

	"github.com/narad-io/narad/internal/meta"
)

// ringUsers is the fake users domain with a listing that counts walks.
type ringUsers struct {
	*fakeUsers
	walks int
}

func (r *ringUsers) Users() []meta.User {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.walks++
	var out []meta.User
	for _, u := range r.byName {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// A key is unsealed once and served from memory while its user does not
// change; a change to the user reads it again, a removal forgets it; an
// unknown ID never costs a walk over the users per request.
func TestKeyRing(t *testing.T) {
	users := &ringUsers{fakeUsers: &fakeUsers{byName: map[string]meta.User{}}}
	users.put(t, "alice", "alice-password")
	users.put(t, "bob", "bob-password")
	sealer := NewSealer([]byte("secret"), "")
	sealed, _ := sealer.Seal(keyA, "alice's secret")
	users.change("alice", func(u *meta.User) { u.AccessKeys = []meta.AccessKey{{ID: keyA, Sealed: sealed}} })
	ring := NewKeyRing(users, sealer)

	for range 3 {
		s, ok, err := ring.AccessKeySecret(keyA)
		if err != nil || !ok || s.Secret != "alice's secret" || s.Principal.Name != "alice" {
			t.Fatalf("resolve: %+v %v %v", s, ok, err)
		}
		if _, ok, _ := ring.AccessKeySecret(keyB); ok {
			t.Fatal("an unknown key resolved")
		}
	}
	if users.walks != 1 {
		t.Fatalf("%d walks over the users, want 1", users.walks)
	}
	sealer.aead = nil // a further unseal would panic: the secret must come from memory
	users.change("bob", func(u *meta.User) { u.Grants = RootGrants })
	if s, ok, _ := ring.AccessKeySecret(keyA); !ok || s.Secret != "alice's secret" {
		t.Fatal("alice's key lost when bob changed")
	}

	sealer = NewSealer([]byte("secret"), "")
	ring.sealer = sealer
	users.change("alice", func(u *meta.User) { u.Grants = RootGrants })
	s, ok, _ := ring.AccessKeySecret(keyA)
	if !ok || len(s.Principal.Grants) != len(RootGrants) {
		t.Fatalf("after alice's grants changed: %+v", s.Principal)
	}
	users.change("alice", func(u *meta.User) { u.AccessKeys = nil })
	if _, ok, _ := ring.AccessKeySecret(keyA); ok {
		t.Fatal("a removed key resolved")
	}
	users.change("alice", func(u *meta.User) { u.AccessKeys = []meta.AccessKey{{ID: keyA, Sealed: sealed}} })
	users.remove("alice")
	if _, ok, _ := ring.AccessKeySecret(keyA); ok {
		t.Fatal("a deleted user's key resolved")
	}
	if len(ring.keys) != 0 {
		t.Fatalf("unsealed secrets kept for gone keys: %d", len(ring.keys))
	}
}
