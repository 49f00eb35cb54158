package auth

import (
	"context"
	"errors"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// AdminUser is the root admin seeded at a cluster's first start.
const AdminUser = "admin"

// RootGrants are the root admin's: admin on every topic.
var RootGrants = []meta.Grant{{Action: meta.ActionAdmin, Patterns: []string{"*"}}}

// SeedStore is what seeding needs of the metastore.
type SeedStore interface {
	IsLeader() bool
	Users() []meta.User
	SeedAdmin(ctx context.Context, u meta.User) error
	Watch() <-chan struct{}
}

// SeedRoot creates the root admin once per cluster lifetime
// (docs/security.md, "The root admin"): while no user exists, whichever node
// leads proposes it, and the metastore applies only the first such command.
// It returns when a user exists, reporting whether this node's proposal was
// the one that took effect — the caller logs a generated password then, and
// only then, so it is logged exactly once.
func SeedRoot(ctx context.Context, s SeedStore, password string, onErr func(error)) (bool, error) {
	hash, err := Hash(password)
	if err != nil {
		return false, err
	}
	u := meta.User{Name: AdminUser, Hash: hash, Grants: RootGrants, CreatedAt: time.Now().Unix()}
	for {
		ch := s.Watch()
		if len(s.Users()) > 0 {
			return false, nil
		}
		if s.IsLeader() {
			err := s.SeedAdmin(ctx, u)
			switch {
			case err == nil:
				return true, nil
			case errors.Is(err, meta.ErrExists):
				return false, nil
			default:
				onErr(err) // lost leadership or timed out: look again
			}
		}
		select {
		case <-ch:
		case <-time.After(time.Second):
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}
