package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// AdminUser is the root admin's user name.
const AdminUser = "admin"

// Static authenticates one user against a bcrypt hash.
type Static struct {
	user string
	hash []byte

	mu       sync.Mutex
	verified map[[32]byte]bool
}

// NewStatic hashes password for user.
func NewStatic(user, password string) (*Static, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return nil, err
	}
	return &Static{user: user, hash: h, verified: make(map[[32]byte]bool)}, nil
}

// Authenticate implements httpapi.Authenticator.
func (s *Static) Authenticate(user, password string) (string, bool) {
	if subtle.ConstantTimeCompare([]byte(user), []byte(s.user)) != 1 {
		return "", false
	}
	key := sha256.Sum256([]byte(user + "\x00" + password))
	s.mu.Lock()
	ok := s.verified[key]
	s.mu.Unlock()
	if ok {
		return user, true
	}
	if bcrypt.CompareHashAndPassword(s.hash, []byte(password)) != nil {
		return "", false
	}
	s.mu.Lock()
	s.verified[key] = true
	s.mu.Unlock()
	return user, true
}
