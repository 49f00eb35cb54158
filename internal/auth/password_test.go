package auth

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestMain(m *testing.M) {
	hashCost = bcrypt.MinCost
	os.Exit(m.Run())
}

// Every length docs/security.md allows hashes and verifies, and all of a
// long password counts: two that share their first 72 bytes differ.
func TestPasswordsOfEveryAllowedLength(t *testing.T) {
	for _, n := range []int{8, 72, 73, 200, 256} {
		pw := strings.Repeat("p", n-1) + "!"
		h, err := Hash(pw)
		if err != nil {
			t.Fatalf("Hash of a %d-byte password: %v", n, err)
		}
		if !VerifyHash(h, pw) {
			t.Fatalf("a %d-byte password does not verify against its own hash", n)
		}
		if n > 72 {
			other := strings.Repeat("p", n-1) + "?" // same first 72 bytes
			if VerifyHash(h, other) {
				t.Fatalf("%d-byte passwords sharing their first %d bytes verify as one", n, n-1)
			}
			if VerifyHash(h, pw[:72]) {
				t.Fatalf("the first 72 bytes of a %d-byte password verify as the whole", n)
			}
		}
	}
}

// Hashes written by the first binaries (plain bcrypt of the password)
// still verify; they never verify a longer password bcrypt would cut.
func TestLegacyHashesStillVerify(t *testing.T) {
	pw := strings.Repeat("l", 72)
	legacy, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if !VerifyHash(legacy, pw) {
		t.Fatal("a legacy hash does not verify its password")
	}
	if VerifyHash(legacy, "wrong-password") {
		t.Fatal("a legacy hash verifies a wrong password")
	}
	if VerifyHash(legacy, pw+"tail") {
		t.Fatal("a legacy hash verifies a 76-byte password by its first 72 bytes")
	}
}

// An unknown user costs what a wrong password costs: exactly one verify,
// against a hash of the same format and bcrypt cost as a real one.
func TestUnknownUserPaysOneVerifyOfTheSameCost(t *testing.T) {
	a, f, failed := newTestAuth(t)
	var seen [][]byte
	a.verify = func(hash []byte, password string) bool {
		seen = append(seen, hash)
		return VerifyHash(hash, password)
	}
	f.put(t, "alice", "correct horse")
	if _, ok := a.Authenticate("alice", "wrong horse", "s"); ok || len(seen) != 1 {
		t.Fatalf("wrong password: ok=%v, %d verifies, want one", ok, len(seen))
	}
	if _, ok := a.Authenticate("mallory", "wrong horse", "s"); ok || len(seen) != 2 {
		t.Fatalf("unknown user: ok=%v, %d verifies in all, want one more", ok, len(seen))
	}
	if *failed != 2 {
		t.Fatalf("%d failures counted, want 2", *failed)
	}
	dummy := seen[1]
	rest, ok := bytes.CutPrefix(dummy, []byte(prehashedPrefix))
	if !ok {
		t.Fatalf("the unknown-user hash %q is not in the format Hash writes", dummy)
	}
	real, err := Hash("some password")
	if err != nil {
		t.Fatal(err)
	}
	dc, err1 := bcrypt.Cost(rest)
	rc, err2 := bcrypt.Cost(real[len(prehashedPrefix):])
	if err1 != nil || err2 != nil || dc != rc {
		t.Fatalf("dummy hash cost %d (%v), a real hash's %d (%v)", dc, err1, rc, err2)
	}
}
