package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// User is an API identity: a bcrypt hash of its password (the password
// itself never enters the metastore or the Raft log) and its grants.
type User struct {
	Name      string  `json:"name"`
	Hash      []byte  `json:"hash"`
	Grants    []Grant `json:"grants"`
	CreatedAt int64   `json:"created_at"`
	// Limits are the user's own rate limits (limits.go); nil: none, the
	// node's configured defaults apply. Omitted when nil, so a user
	// without limits is the same command and record as before limits
	// existed.
	Limits *Limits `json:"limits,omitempty"`
	// AccessKeys are the user's AWS-style access keys (accesskeys.go),
	// their secrets sealed. Omitted when none, so a user without keys is
	// the same command and record as before keys existed.
	AccessKeys []AccessKey `json:"access_keys,omitempty"`
	// ID is this incarnation of the name: the Raft index of the command
	// that created the user, assigned by the FSM, never changed. A user
	// deleted and created again under the same name gets another ID, so
	// nothing recorded for the old one (topic ownership) passes to the
	// new one. 0 is LegacyUserID: a record written before IDs existed.
	// Like Version it is stored beside the JSON and never travels in a
	// command, so a command's payload is the same for every binary.
	ID uint64 `json:"-"`
	// Version is the Raft index of the last change to this record: a
	// credential cache can tell "this user changed" from "some user did".
	Version uint64 `json:"-"`
}

// LegacyUserID is the ID of a user created by a binary that did not
// assign IDs. Such a user keeps it until deleted; every user created
// since has a non-zero ID (a Raft index), so a re-created name never
// reads as legacy again. A node still running such a binary neither
// assigns nor keeps IDs in its replica: upgrade every node before
// deleting and re-creating users.
const LegacyUserID = 0

// Grant allows one action on the topics matching any of its patterns: an
// exact topic name, or a prefix ending in '*' ("invoices.*", or "*" for
// every topic).
type Grant struct {
	Action   string   `json:"action"`
	Patterns []string `json:"patterns"`
}

// The grant actions (docs/security.md, "Grants").
const (
	ActionProduce = "produce"
	ActionConsume = "consume"
	ActionCreate  = "create"
	ActionAdmin   = "admin"
)

// Username and password rules (docs/security.md, "Users and passwords").
var usernameRE = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)

// topicNameChars are the characters of a topic name (docs/http-api.md).
const topicNameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

// MinPasswordBytes and MaxPasswordBytes bound a password. Package config
// restates them for NARAD_ADMIN_PASSWORD (it sits below meta); a test in
// package server holds the two together.
const (
	MinPasswordBytes = 8
	MaxPasswordBytes = 256
	maxGrants        = 64
	maxPatterns      = 256
)

// CheckUsername reports why name is not a valid username.
func CheckUsername(name string) error {
	if !usernameRE.MatchString(name) {
		return fmt.Errorf("username %q: want 1..64 of [A-Za-z0-9._@-]", name)
	}
	return nil
}

// CheckPassword reports why a password is refused.
func CheckPassword(p string) error {
	if len(p) < MinPasswordBytes || len(p) > MaxPasswordBytes {
		return fmt.Errorf("password: want %d..%d bytes, got %d", MinPasswordBytes, MaxPasswordBytes, len(p))
	}
	return nil
}

// CheckGrants reports why grants are refused: an unknown action, no
// patterns, or a pattern that is neither a topic name nor a prefix
// ending in '*' (a '*' anywhere else is refused, not read literally).
func CheckGrants(gs []Grant) error {
	if len(gs) > maxGrants {
		return fmt.Errorf("grants: at most %d, got %d", maxGrants, len(gs))
	}
	for i, g := range gs {
		switch g.Action {
		case ActionProduce, ActionConsume, ActionCreate, ActionAdmin:
		default:
			return fmt.Errorf("grants[%d].action %q: want produce, consume, create or admin", i, g.Action)
		}
		if len(g.Patterns) == 0 || len(g.Patterns) > maxPatterns {
			return fmt.Errorf("grants[%d].patterns: want 1..%d patterns, got %d", i, maxPatterns, len(g.Patterns))
		}
		for j, p := range g.Patterns {
			prefix, wild := strings.CutSuffix(p, "*")
			if strings.Contains(prefix, "*") || (!wild && p == "") {
				return fmt.Errorf("grants[%d].patterns[%d] %q: want a topic name or a prefix ending in '*'", i, j, p)
			}
			if len(prefix) > 249 || strings.TrimLeft(prefix, topicNameChars) != "" {
				return fmt.Errorf("grants[%d].patterns[%d] %q: a topic name is 1..249 of [A-Za-z0-9._-]", i, j, p)
			}
		}
	}
	return nil
}

// Payloads of the users family.

// PutUserCmd creates a user (ErrExists if the name is taken).
type PutUserCmd struct {
	User User `json:"user"`
}

// SeedAdminCmd creates the root admin only while no user exists at all
// (ErrExists otherwise), so every node may propose it and exactly one
// seeding takes effect, once per cluster lifetime.
type SeedAdminCmd struct {
	User User `json:"user"`
}

// SetGrantsCmd replaces a user's grants.
type SetGrantsCmd struct {
	Name   string  `json:"name"`
	Grants []Grant `json:"grants"`
}

// SetPasswordCmd replaces a user's password hash.
type SetPasswordCmd struct {
	Name string `json:"name"`
	Hash []byte `json:"hash"`
}

// DeleteUserCmd removes a user.
type DeleteUserCmd struct {
	Name string `json:"name"`
}

func checkUserRecord(u User) error {
	if err := CheckUsername(u.Name); err != nil {
		return invalidf("%v", err)
	}
	if len(u.Hash) == 0 {
		return invalidf("user %q without a password hash", u.Name)
	}
	if err := CheckGrants(u.Grants); err != nil {
		return invalidf("user %q: %v", u.Name, err)
	}
	if err := CheckLimits(u.Limits); err != nil {
		return invalidf("user %q: %v", u.Name, err)
	}
	if len(u.AccessKeys) > 0 {
		// Keys come one at a time (OpAddAccessKey), which holds an ID
		// to one key in the cluster.
		return invalidf("user %q: a new user holds no access keys", u.Name)
	}
	return nil
}

func applyPutUser(a *applyTx, payload json.RawMessage) error {
	var c PutUserCmd
	if err := decodePayload(OpPutUser, payload, &c); err != nil {
		return err
	}
	if err := checkUserRecord(c.User); err != nil {
		return err
	}
	if _, exists, err := a.user(c.User.Name); err != nil || exists {
		if err != nil {
			return err
		}
		return fmt.Errorf("meta: user %q: %w", c.User.Name, ErrExists)
	}
	return a.putNewUser(c.User)
}

func applySeedAdmin(a *applyTx, payload json.RawMessage) error {
	var c SeedAdminCmd
	if err := decodePayload(OpSeedAdmin, payload, &c); err != nil {
		return err
	}
	if err := checkUserRecord(c.User); err != nil {
		return err
	}
	if k, _ := a.tx.Bucket(bucketUsers).Cursor().First(); k != nil {
		return fmt.Errorf("meta: seed admin: users exist already: %w", ErrExists)
	}
	return a.putNewUser(c.User)
}

func applySetGrants(a *applyTx, payload json.RawMessage) error {
	var c SetGrantsCmd
	if err := decodePayload(OpSetGrants, payload, &c); err != nil {
		return err
	}
	u, err := a.existingUser(c.Name)
	if err != nil {
		return err
	}
	if err := CheckGrants(c.Grants); err != nil {
		return invalidf("user %q: %v", c.Name, err)
	}
	u.Grants = c.Grants
	return a.putUser(u)
}

func applySetPassword(a *applyTx, payload json.RawMessage) error {
	var c SetPasswordCmd
	if err := decodePayload(OpSetPassword, payload, &c); err != nil {
		return err
	}
	u, err := a.existingUser(c.Name)
	if err != nil {
		return err
	}
	if len(c.Hash) == 0 {
		return invalidf("user %q: empty password hash", c.Name)
	}
	u.Hash = c.Hash
	return a.putUser(u)
}

func applyDeleteUser(a *applyTx, payload json.RawMessage) error {
	var c DeleteUserCmd
	if err := decodePayload(OpDeleteUser, payload, &c); err != nil {
		return err
	}
	if _, err := a.existingUser(c.Name); err != nil {
		return err
	}
	a.bump(domUsers)
	return a.tx.Bucket(bucketUsers).Delete([]byte(c.Name))
}

func readUser(tx *bolt.Tx, name string) (User, bool, error) {
	raw := tx.Bucket(bucketUsers).Get([]byte(name))
	if raw == nil {
		return User{}, false, nil
	}
	var rec userRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return User{}, false, fmt.Errorf("user %q: %w", name, err)
	}
	rec.User.Version, rec.User.ID = rec.Version, rec.ID
	return rec.User, true, nil
}

// userRecord is a user as stored: the record's JSON with the fields that
// the FSM assigns. A record written before IDs existed has no "id" and
// reads as LegacyUserID.
type userRecord struct {
	User
	Version uint64 `json:"version"`
	ID      uint64 `json:"id,omitempty"`
}

func (a *applyTx) user(name string) (User, bool, error) { return readUser(a.tx, name) }

func (a *applyTx) existingUser(name string) (User, error) {
	u, ok, err := a.user(name)
	if err != nil {
		return User{}, err
	}
	if !ok {
		return User{}, fmt.Errorf("meta: user %q: %w", name, ErrNotFound)
	}
	return u, nil
}

// putNewUser stores a user created by this command: its ID is the
// command's index, whatever the payload said.
func (a *applyTx) putNewUser(u User) error {
	u.ID = a.index
	return a.putUser(u)
}

// putUser stamps the record with this command's index and stores it,
// keeping the ID it has.
func (a *applyTx) putUser(u User) error {
	raw, err := json.Marshal(userRecord{User: u, Version: a.index, ID: u.ID})
	if err != nil {
		return err
	}
	a.bump(domUsers)
	return a.tx.Bucket(bucketUsers).Put([]byte(u.Name), raw)
}

// CreateUser creates u (ErrExists if the name is taken).
func (s *Store) CreateUser(ctx context.Context, u User) error {
	return s.propose(ctx, OpPutUser, PutUserCmd{User: u})
}

// SeedAdmin creates u only if no user exists yet; ErrExists otherwise.
func (s *Store) SeedAdmin(ctx context.Context, u User) error {
	return s.propose(ctx, OpSeedAdmin, SeedAdminCmd{User: u})
}

// SetGrants replaces a user's grants.
func (s *Store) SetGrants(ctx context.Context, name string, gs []Grant) error {
	return s.propose(ctx, OpSetGrants, SetGrantsCmd{Name: name, Grants: gs})
}

// SetPassword replaces a user's password hash.
func (s *Store) SetPassword(ctx context.Context, name string, hash []byte) error {
	return s.propose(ctx, OpSetPassword, SetPasswordCmd{Name: name, Hash: hash})
}

// DeleteUser removes a user.
func (s *Store) DeleteUser(ctx context.Context, name string) error {
	return s.propose(ctx, OpDeleteUser, DeleteUserCmd{Name: name})
}

// UsersVersion is the users domain version.
func (s *Store) UsersVersion() uint64 { return s.fsm.state.Load().v.Users }

// User reads one user from the local replica.
func (s *Store) User(name string) (User, bool) {
	var u User
	var ok bool
	err := s.fsm.view(func(tx *bolt.Tx) error {
		var err error
		u, ok, err = readUser(tx, name)
		return err
	})
	if err != nil {
		s.log.Error("metastore: read user", "name", name, "err", err)
		return User{}, false
	}
	return u, ok
}

// HasUsers reports whether the local replica holds any user: with
// security on, a node whose replica has none cannot authenticate anyone
// yet (the root admin's seeding has not reached it).
func (s *Store) HasUsers() bool {
	has := false
	// The only error is a closed store, which holds nobody.
	_ = s.fsm.view(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketUsers).Cursor().First()
		has = k != nil
		return nil
	})
	return has
}

// Users returns every user, sorted by name.
func (s *Store) Users() []User {
	var out []User
	err := s.fsm.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketUsers).ForEach(func(k, _ []byte) error {
			u, _, err := readUser(tx, string(k))
			if err != nil {
				return err
			}
			out = append(out, u)
			return nil
		})
	})
	if err != nil {
		s.log.Error("metastore: read users", "err", err)
		return nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
