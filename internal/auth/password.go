package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"sync"

	"github.com/narad-io/narad/internal/meta"
	"golang.org/x/crypto/bcrypt"
)

// Stored password hashes come in two formats, told apart by their prefix:
//
//	$narad-hs256$<bcrypt>  bcrypt of base64(HMAC-SHA-256(prehashKey, password)),
//	                       what Hash writes: any 8..256-byte password, all of it
//	$2a$… (plain bcrypt)   bcrypt of the password itself, as the first
//	                       binaries wrote; still verified, never written
//
// bcrypt reads at most 72 bytes, so two long passwords sharing their first
// 72 would be one password; the pre-hash gives bcrypt 44 bytes that depend
// on every byte. It is keyed (a fixed, public key) so that a dump of plain
// SHA-256 password hashes from elsewhere cannot be tried against ours
// without cracking the bcrypt; base64 keeps NUL bytes out of bcrypt's input.
const prehashedPrefix = "$narad-hs256$"

var prehashKey = []byte("narad password pre-hash, v1")

// legacyMaxBytes is what plain bcrypt reads of a password.
const legacyMaxBytes = 72

// hashCost is bcrypt's cost for new hashes and the dummy one alike; tests
// lower it (bcrypt at the default cost takes seconds under the race
// detector).
var hashCost = bcrypt.DefaultCost

func prehash(password string) []byte {
	m := hmac.New(sha256.New, prehashKey)
	m.Write([]byte(password))
	return []byte(base64.StdEncoding.EncodeToString(m.Sum(nil)))
}

// Hash hashes a new password for storage, in the current format.
func Hash(password string) ([]byte, error) {
	h, err := bcrypt.GenerateFromPassword(prehash(password), hashCost)
	if err != nil {
		return nil, err
	}
	return append([]byte(prehashedPrefix), h...), nil
}

// VerifyHash reports whether password matches a stored hash of either
// format. A legacy hash never matches a password past 72 bytes: it could
// only have been made from a shorter one, and bcrypt would ignore the rest.
func VerifyHash(hash []byte, password string) bool {
	if rest, ok := bytes.CutPrefix(hash, []byte(prehashedPrefix)); ok {
		return bcrypt.CompareHashAndPassword(rest, prehash(password)) == nil
	}
	match := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	return match && len(password) <= legacyMaxBytes
}

// PasswordMatches reports whether password matches u's hash.
func PasswordMatches(u meta.User, password string) bool { return VerifyHash(u.Hash, password) }

// dummyHash is what an unknown user's password is checked against: a hash
// in the current format at the current cost, made once per process.
var dummyHash = sync.OnceValue(func() []byte {
	h, err := Hash("narad: not any user's password")
	if err != nil {
		panic("auth: cannot make the dummy password hash: " + err.Error())
	}
	return h
})

// WarmUp makes the unknown-user hash now (one bcrypt), so that the first
// request naming an unknown user does not pay for it.
func WarmUp() { dummyHash() }
