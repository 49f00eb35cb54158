package auth

import (
	"context"
	"errors"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

// Store is the users side of the metastore that user management writes.
type Store interface {
	Users
	Users() []meta.User
	CreateUser(ctx context.Context, u meta.User) error
	SetGrants(ctx context.Context, name string, gs []meta.Grant) error
	SetPassword(ctx context.Context, name string, hash []byte) error
	SetLimits(ctx context.Context, name string, l *meta.Limits) error
	DeleteUser(ctx context.Context, name string) error
}

// UserView is a user as the API shows it: never the hash. ID is the
// user's incarnation (a topic's owner_id names it); absent for a user
// created before IDs existed.
//
// Limits are the rate limits in force for the user on the node that
// answers: its own where it set them, this node's defaults for the
// others, which LimitsFromDefaults names (limits.go).
type UserView struct {
	Username           string       `json:"username"`
	ID                 uint64       `json:"id,omitempty"`
	Grants             []meta.Grant `json:"grants"`
	Limits             meta.Rates   `json:"limits"`
	LimitsFromDefaults []string     `json:"limits_from_defaults"`
}

// Manager carries out the users API (docs/security.md) for an authenticated
// actor. Managing others needs an admin grant, and covers only users whose
// grants the actor holds itself (a scoped admin cannot create, change or
// remove anyone who could do more than it can: no escalation); a user may
// always read itself and change its own password, and only with the
// current one, admin or not.
type Manager struct {
	store Store
	// mapErr turns metastore outcomes into API errors.
	mapErr func(error) error
	// defaults are this node's rate limits for users without their own
	// (the configuration's), shown in views.
	defaults meta.Rates
	// sealer seals access key secrets (accesskeys.go); nil: no access
	// keys.
	sealer *Sealer
}

// NewManager manages the users of store; mapErr maps metastore errors;
// defaults are the node's configured rate limits.
func NewManager(store Store, mapErr func(error) error, defaults meta.Rates) *Manager {
	return &Manager{store: store, mapErr: mapErr, defaults: defaults}
}

// Create makes a user with password, grants and its own limits (nil:
// the defaults apply).
func (m *Manager) Create(ctx context.Context, actor Principal, name, password string, gs []meta.Grant, limits *meta.Limits) (UserView, error) {
	if err := checkNew(name, password, gs); err != nil {
		return UserView{}, err
	}
	if err := meta.CheckLimits(limits); err != nil {
		return UserView{}, refusal.New(refusal.ErrInvalid, 0, "%v", err)
	}
	if limits.Empty() {
		limits = nil
	}
	if err := m.mayGrant(actor, gs); err != nil {
		return UserView{}, err
	}
	hash, err := Hash(password)
	if err != nil {
		return UserView{}, err
	}
	u := meta.User{Name: name, Hash: hash, Grants: nonNil(gs), CreatedAt: time.Now().Unix(), Limits: limits}
	if err := m.store.CreateUser(ctx, u); err != nil {
		if errors.Is(err, meta.ErrExists) {
			// The metastore's own words ("user x: exists") are not the
			// API's: a taken name reads the same for users as for topics.
			return UserView{}, refusal.New(refusal.ErrConflict, 0, "user %q already exists", name)
		}
		return UserView{}, m.mapErr(err)
	}
	// The metastore assigned the ID; this node leads, so it has applied it.
	if created, ok := m.store.User(name); ok {
		u = created
	}
	return m.view(u), nil
}

// List shows the users the actor may manage (all of them for a root admin).
func (m *Manager) List(actor Principal) ([]UserView, error) {
	if !IsAdmin(actor.Grants) {
		return nil, refusal.New(refusal.ErrForbidden, 0, "listing users needs an admin grant")
	}
	out := []UserView{}
	for _, u := range m.store.Users() {
		if Covers(actor.Grants, u.Grants) {
			out = append(out, m.view(u))
		}
	}
	return out, nil
}

// Get shows one user: itself, or one the actor may manage.
func (m *Manager) Get(actor Principal, name string) (UserView, error) {
	u, err := m.target(actor, name, true)
	if err != nil {
		return UserView{}, err
	}
	return m.view(u), nil
}

// SetGrants replaces a user's grants.
func (m *Manager) SetGrants(ctx context.Context, actor Principal, name string, gs []meta.Grant) (UserView, error) {
	if err := meta.CheckGrants(gs); err != nil {
		return UserView{}, refusal.New(refusal.ErrInvalid, 0, "%v", err)
	}
	u, err := m.target(actor, name, false)
	if err != nil {
		return UserView{}, err
	}
	if err := m.mayGrant(actor, gs); err != nil {
		return UserView{}, err
	}
	if err := m.store.SetGrants(ctx, name, nonNil(gs)); err != nil {
		return UserView{}, m.mapErr(err)
	}
	u.Grants = nonNil(gs)
	return m.view(u), nil
}

// SetPassword changes a password: one's own only with the current
// password, whoever asks (an admin too, docs/security.md: the change
// proves again that it is the owner, not just whoever holds its
// credentials for a request), or another's the actor may manage (an
// admin reset, no current password).
func (m *Manager) SetPassword(ctx context.Context, actor Principal, name, password, current string) error {
	if err := meta.CheckPassword(password); err != nil {
		return refusal.New(refusal.ErrInvalid, 0, "%v", err)
	}
	u, ok := m.store.User(name)
	switch {
	case ok && name == actor.Name:
		if current == "" {
			return refusal.New(refusal.ErrInvalid, 0, "current_password is required to change your own password")
		}
		if !PasswordMatches(u, current) {
			return refusal.New(refusal.ErrForbidden, 0, "current_password does not match")
		}
	default:
		var err error
		if u, err = m.target(actor, name, false); err != nil {
			return err
		}
	}
	hash, err := Hash(password)
	if err != nil {
		return err
	}
	return m.mapErr(m.store.SetPassword(ctx, u.Name, hash))
}

// Delete removes a user; nobody removes itself (the last admin could
// otherwise lock everyone out).
func (m *Manager) Delete(ctx context.Context, actor Principal, name string) error {
	if name == actor.Name {
		return refusal.New(refusal.ErrConflict, 0, "a user cannot delete itself")
	}
	if _, err := m.target(actor, name, false); err != nil {
		return err
	}
	return m.mapErr(m.store.DeleteUser(ctx, name))
}

// target reads the user an operation acts on and checks the actor may act
// on it; self lets a user read its own record.
func (m *Manager) target(actor Principal, name string, self bool) (meta.User, error) {
	if err := meta.CheckUsername(name); err != nil {
		return meta.User{}, refusal.New(refusal.ErrInvalid, 0, "%v", err)
	}
	if !(self && name == actor.Name) && !IsAdmin(actor.Grants) {
		return meta.User{}, refusal.New(refusal.ErrForbidden, 0, "managing users needs an admin grant")
	}
	u, ok := m.store.User(name)
	if !ok {
		return meta.User{}, refusal.New(refusal.ErrNotFound, 0, "user %q does not exist", name)
	}
	if self && name == actor.Name {
		return u, nil
	}
	if !m.manages(actor, u) {
		return meta.User{}, refusal.New(refusal.ErrForbidden, 0, "user %q holds grants beyond yours", name)
	}
	return u, nil
}

func (m *Manager) manages(actor Principal, u meta.User) bool {
	return IsAdmin(actor.Grants) && Covers(actor.Grants, u.Grants)
}

func (m *Manager) mayGrant(actor Principal, gs []meta.Grant) error {
	if !IsAdmin(actor.Grants) {
		return refusal.New(refusal.ErrForbidden, 0, "managing users needs an admin grant")
	}
	if !Covers(actor.Grants, gs) {
		return refusal.New(refusal.ErrForbidden, 0, "a user can only grant what it holds itself")
	}
	return nil
}

func checkNew(name, password string, gs []meta.Grant) error {
	for _, err := range []error{meta.CheckUsername(name), meta.CheckPassword(password), meta.CheckGrants(gs)} {
		if err != nil {
			return refusal.New(refusal.ErrInvalid, 0, "%v", err)
		}
	}
	return nil
}

func (m *Manager) view(u meta.User) UserView {
	return UserView{Username: u.Name, ID: u.ID, Grants: nonNil(u.Grants),
		Limits: u.Limits.Resolve(m.defaults), LimitsFromDefaults: u.Limits.Defaulted()}
}

func nonNil(gs []meta.Grant) []meta.Grant {
	if gs == nil {
		return []meta.Grant{}
	}
	return gs
}
