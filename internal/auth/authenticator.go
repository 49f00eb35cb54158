package auth

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// Users is what authentication reads from the metastore (its local replica:
// any node authenticates any request without a network hop).
type Users interface {
	User(name string) (meta.User, bool)
	UsersVersion() uint64
	// HasUsers reports whether the replica holds any user yet.
	HasUsers() bool
}

// Principal is an authenticated user with the grants it had when verified.
// ID tells this user from an earlier one of the same name (meta.User.ID):
// ownership checks compare both.
// Limits are its own rate limits (nil: the node's defaults), read with
// the record it was verified against, so a change applies to its next
// request.
type Principal struct {
	Name   string
	ID     uint64
	Grants []meta.Grant
	Limits *meta.Limits
}

// principal is u as verified: Basic auth and access keys give a user the
// same one.
func principal(u meta.User) Principal {
	return Principal{Name: u.Name, ID: u.ID, Grants: u.Grants, Limits: u.Limits}
}

// Authenticator checks Basic credentials against bcrypt hashes. bcrypt is
// paid once per (user, password, user-record version): verified pairs are
// cached by a SHA-256 of the pair, and while the users domain does not move
// a cache hit costs one atomic load and a map lookup.
type Authenticator struct {
	users    Users
	failures *failures
	metric   func()              // counts a failed attempt; may be nil
	sleep    func(time.Duration) // time.Sleep; tests replace it
	// verify checks a password against a stored hash (VerifyHash); tests
	// count its calls.
	verify func(hash []byte, password string) bool

	// startedWhen, if set, says when start-up is over (the node is ready);
	// started latches the first time it holds and users exist here.
	startedWhen func() bool
	started     atomic.Bool

	mu    sync.Mutex
	cache map[[32]byte]cached
}

type cached struct {
	domainVersion uint64 // users domain version when last confirmed
	userVersion   uint64 // the user record's version it was verified against
	p             Principal
}

// maxCached bounds the cache; past it, it is cleared (a re-verify costs
// one bcrypt per client).
const maxCached = 10_000

// NewAuthenticator authenticates against users; onFailure, if not nil, is
// called on every failed attempt (a metric). It starts nothing: a node
// calls WarmUp in its own run group.
func NewAuthenticator(users Users, onFailure func()) *Authenticator {
	return &Authenticator{users: users, failures: newFailures(), metric: onFailure, sleep: time.Sleep,
		verify: VerifyHash, cache: make(map[[32]byte]cached)}
}

// CountFailuresOnceReady makes start-up end when ready first holds (and
// this replica holds a user): until then failed logins are answered 401
// but do not feed the per-source slowdown, since a client retrying good
// credentials against a node that cannot check them yet is no attacker.
// Without it start-up ends at the first user this replica holds.
func (a *Authenticator) CountFailuresOnceReady(ready func() bool) { a.startedWhen = ready }

// Ready reports whether this node can authenticate anyone: its replica
// holds a user, which after the cluster's first start always includes
// the root admin's seeding (nobody can delete itself, so the users never
// run out again).
func (a *Authenticator) Ready() (bool, string) {
	if !a.users.HasUsers() {
		return false, "the root admin is not in this node's metastore replica yet (seeding or catch-up pending)"
	}
	return true, ""
}

// counting reports whether start-up is over, so that failures count.
func (a *Authenticator) counting() bool {
	if a.started.Load() {
		return true
	}
	if !a.users.HasUsers() || (a.startedWhen != nil && !a.startedWhen()) {
		return false
	}
	a.started.Store(true)
	return true
}

// Authenticate verifies user and password from source (the client's
// address). A source with a burst of recent failures is slowed before the
// answer (docs/security.md); the password is never logged or kept.
func (a *Authenticator) Authenticate(user, password, source string) (Principal, bool) {
	key := credentialKey(user, password)
	v := a.users.UsersVersion()
	a.mu.Lock()
	c, hit := a.cache[key]
	a.mu.Unlock()
	if hit && c.domainVersion == v {
		return c.p, true
	}
	u, ok := a.users.User(user)
	if ok && hit && u.Version == c.userVersion {
		c.domainVersion = v // some other user changed; this one did not
		a.remember(key, c)
		return c.p, true
	}
	// An unknown name pays the same bcrypt as a wrong password, against a
	// dummy hash of the same format and cost: the answer's timing does not
	// tell which names exist.
	hash := u.Hash
	if !ok {
		hash = dummyHash()
	}
	if match := a.verify(hash, password); !ok || !match {
		if hit {
			a.forget(key)
		}
		if a.metric != nil {
			a.metric()
		}
		if a.counting() {
			if d := a.failures.fail(source); d > 0 {
				a.sleep(d)
			}
		}
		return Principal{}, false
	}
	p := principal(u)
	a.remember(key, cached{domainVersion: v, userVersion: u.Version, p: p})
	return p, true
}

// credentialKey is the cache's key for a pair: a SHA-256 of name, a zero
// byte and password, built on the stack (a concatenated string escaped to
// the heap for pairs past 32 bytes: one allocation per request).
func credentialKey(user, password string) [32]byte {
	var buf [512]byte
	return sha256.Sum256(append(append(append(buf[:0], user...), 0), password...))
}

func (a *Authenticator) remember(key [32]byte, c cached) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cache) >= maxCached {
		clear(a.cache)
	}
	a.cache[key] = c
}

func (a *Authenticator) forget(key [32]byte) {
	a.mu.Lock()
	delete(a.cache, key)
	a.mu.Unlock()
}
