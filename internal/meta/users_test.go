package meta

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func testUser(name string, gs ...Grant) User {
	return User{Name: name, Hash: []byte("$2a$04$not-a-real-hash-but-non-empty"), Grants: gs}
}

func TestUserLifecycle(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	topicsBefore := s.TopicsVersion()

	orders := Grant{Action: ActionProduce, Patterns: []string{"orders", "invoices.*"}}
	must(t, s.CreateUser(ctx, testUser("alice", orders)))
	if err := s.CreateUser(ctx, testUser("alice")); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	u, ok := s.User("alice")
	if !ok || !slices.EqualFunc(u.Grants, []Grant{orders}, grantEqual) || u.Version == 0 {
		t.Fatalf("User(alice) = %+v %v", u, ok)
	}
	v1 := u.Version

	must(t, s.CreateUser(ctx, testUser("bob")))
	if u, _ := s.User("alice"); u.Version != v1 {
		t.Fatalf("alice's version moved (%d -> %d) when bob was created", v1, u.Version)
	}
	if s.UsersVersion() <= v1 {
		t.Fatalf("users version %d did not move past %d", s.UsersVersion(), v1)
	}
	if s.TopicsVersion() != topicsBefore {
		t.Fatal("a users command moved the topics version")
	}

	consume := Grant{Action: ActionConsume, Patterns: []string{"*"}}
	must(t, s.SetGrants(ctx, "alice", []Grant{consume}))
	must(t, s.SetPassword(ctx, "alice", []byte("new-hash")))
	u, _ = s.User("alice")
	if string(u.Hash) != "new-hash" || len(u.Grants) != 1 || u.Grants[0].Action != ActionConsume || u.Version <= v1 {
		t.Fatalf("after grants and password: %+v", u)
	}
	if names := userNames(s.Users()); !slices.Equal(names, []string{"alice", "bob"}) {
		t.Fatalf("Users() = %v", names)
	}
	must(t, s.DeleteUser(ctx, "bob"))
	for _, err := range []error{
		s.DeleteUser(ctx, "bob"),
		s.SetGrants(ctx, "bob", nil),
		s.SetPassword(ctx, "bob", []byte("h")),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("on a deleted user: %v, want ErrNotFound", err)
		}
	}
	if _, ok := s.User("bob"); ok {
		t.Fatal("bob still readable after delete")
	}
}

// The root admin is seeded once: while no user exists. Every node may
// propose it; only the first takes effect.
func TestSeedAdminOnlyWhenEmpty(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	root := Grant{Action: ActionAdmin, Patterns: []string{"*"}}
	first := testUser("admin", root)
	first.Hash = []byte("first")
	must(t, s.SeedAdmin(ctx, first))
	second := first
	second.Hash = []byte("second")
	if err := s.SeedAdmin(ctx, second); !errors.Is(err, ErrExists) {
		t.Fatalf("second seed: %v, want ErrExists", err)
	}
	if u, _ := s.User("admin"); string(u.Hash) != "first" {
		t.Fatalf("the second seed replaced the admin's hash: %q", u.Hash)
	}
	// Even with the admin deleted, another user existing blocks a reseed.
	must(t, s.CreateUser(ctx, testUser("carol")))
	must(t, s.DeleteUser(ctx, "admin"))
	if err := s.SeedAdmin(ctx, second); !errors.Is(err, ErrExists) {
		t.Fatalf("seed with carol present: %v, want ErrExists", err)
	}
}

func TestUserRulesRefuseBadRecords(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		name string
		u    User
		want string
	}{
		{"bad name", testUser("no spaces"), "username"},
		{"long name", testUser(strings.Repeat("a", 65)), "username"},
		{"no hash", User{Name: "h"}, "without a password hash"},
		{"unknown action", testUser("x", Grant{Action: "delete", Patterns: []string{"*"}}), "action"},
		{"no patterns", testUser("x", Grant{Action: ActionProduce}), "patterns"},
		{"inner star", testUser("x", Grant{Action: ActionProduce, Patterns: []string{"a*b"}}), "prefix ending in '*'"},
		{"empty pattern", testUser("x", Grant{Action: ActionProduce, Patterns: []string{""}}), "pattern"},
		{"bad char", testUser("x", Grant{Action: ActionProduce, Patterns: []string{"a/b"}}), "topic name"},
	} {
		err := s.CreateUser(ctx, tc.u)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
		}
	}
	if len(s.Users()) != 0 {
		t.Fatalf("a refused create left users: %v", userNames(s.Users()))
	}
	for _, p := range []string{"*", "orders", "invoices.*", "a-b_c.d"} {
		if err := CheckGrants([]Grant{{Action: ActionConsume, Patterns: []string{p}}}); err != nil {
			t.Errorf("pattern %q refused: %v", p, err)
		}
	}
	if CheckPassword("1234567") == nil || CheckPassword(strings.Repeat("x", 257)) == nil || CheckPassword("12345678") != nil {
		t.Error("password length rules")
	}
}

func grantEqual(a, b Grant) bool { return a.Action == b.Action && slices.Equal(a.Patterns, b.Patterns) }

func userNames(us []User) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Name)
	}
	return out
}
