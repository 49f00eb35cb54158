package auth

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/meta"
)

// passwordStore is the fake users domain with password changes applied.
type passwordStore struct{ limitStore }

func (s passwordStore) SetPassword(_ context.Context, name string, hash []byte) error {
	s.change(name, func(u *meta.User) { u.Hash = hash })
	return nil
}

// One's own password changes only with the current one, for an admin as
// for anyone (docs/security.md); an admin resets another user's without
// it. A refused change leaves the password as it was.
func TestSetPasswordOwnNeedsTheCurrentOneAdminOrNot(t *testing.T) {
	users := &fakeUsers{byName: map[string]meta.User{}}
	users.put(t, "root", "root-password", RootGrants...)
	users.put(t, "alice", "alice-password")
	m := NewManager(passwordStore{limitStore{users}}, func(err error) error { return err }, meta.Rates{})
	a := NewAuthenticator(users, nil)
	a.sleep = func(time.Duration) {}
	root, _ := a.Authenticate("root", "root-password", "src")
	alice, _ := a.Authenticate("alice", "alice-password", "src")
	ctx := context.Background()
	works := func(name, password string) bool {
		_, ok := a.Authenticate(name, password, "src")
		return ok
	}

	for _, c := range []struct {
		who     Principal
		current string
		status  int
	}{
		{root, "", http.StatusBadRequest},
		{root, "wrong-password", http.StatusForbidden},
		{alice, "", http.StatusBadRequest},
		{alice, "wrong-password", http.StatusForbidden},
	} {
		err := m.SetPassword(ctx, c.who, c.who.Name, "taken-over", c.current)
		if apierr.Status(err) != c.status {
			t.Errorf("%s changing its own password with current %q: %v, want %d", c.who.Name, c.current, err, c.status)
		}
		if works(c.who.Name, "taken-over") {
			t.Fatalf("%s: a refused change took effect", c.who.Name)
		}
	}

	if err := m.SetPassword(ctx, root, "root", "root-password-2", "root-password"); err != nil {
		t.Fatalf("root with its current password: %v", err)
	}
	if !works("root", "root-password-2") {
		t.Fatal("root's own change did not take effect")
	}
	if err := m.SetPassword(ctx, alice, "alice", "alice-password-2", "alice-password"); err != nil {
		t.Fatalf("alice with her current password: %v", err)
	}
	// An admin resets another user's password without the current one.
	if err := m.SetPassword(ctx, root, "alice", "alice-reset-1", ""); err != nil {
		t.Fatalf("an admin reset: %v", err)
	}
	if !works("alice", "alice-reset-1") {
		t.Fatal("the admin reset did not take effect")
	}
	// Nobody without an admin grant resets another's.
	if err := m.SetPassword(ctx, alice, "root", "taken-over", ""); apierr.Status(err) != http.StatusForbidden {
		t.Fatalf("alice resetting root's password: %v, want 403", err)
	}
}
