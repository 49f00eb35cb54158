package auth

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"golang.org/x/crypto/bcrypt"
)

// Users is what authentication reads from the metastore (its local replica:
// any node authenticates any request without a network hop).
type Users interface {
	User(name string) (meta.User, bool)
	UsersVersion() uint64
}

// Principal is an authenticated user with the grants it had when verified.
type Principal struct {
	Name   string
	Grants []meta.Grant
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
// called on every failed attempt (a metric).
func NewAuthenticator(users Users, onFailure func()) *Authenticator {
	return &Authenticator{users: users, failures: newFailures(), metric: onFailure, sleep: time.Sleep,
		cache: make(map[[32]byte]cached)}
}

// Authenticate verifies user and password from source (the client's
// address). A source with a burst of recent failures is slowed before the
// answer (07-security.md); the password is never logged or kept.
func (a *Authenticator) Authenticate(user, password, source string) (Principal, bool) {
	key := sha256.Sum256([]byte(user + "\x00" + password))
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
	if !ok || !PasswordMatches(u, password) {
		if hit {
			a.forget(key)
		}
		if a.metric != nil {
			a.metric()
		}
		if d := a.failures.fail(source); d > 0 {
			a.sleep(d)
		}
		return Principal{}, false
	}
	p := Principal{Name: u.Name, Grants: u.Grants}
	a.remember(key, cached{domainVersion: v, userVersion: u.Version, p: p})
	return p, true
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

// Hash hashes a new password for storage.
func Hash(password string) ([]byte, error) {
	return bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
}

// PasswordMatches reports whether password matches u's hash.
func PasswordMatches(u meta.User, password string) bool {
	return bcrypt.CompareHashAndPassword(u.Hash, []byte(password)) == nil
}
