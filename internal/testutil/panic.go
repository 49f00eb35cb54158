package testutil

import (
	"fmt"
	"testing"
)

// PanicOf runs f and returns what it panicked with, formatted ("" when it
// returned normally). Tests of the invariants a package checks in race
// builds break its state by hand and expect the panic that names the
// invariant.
func PanicOf(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	f()
	return ""
}

// RequireChecks skips t unless on: a package's assertInvariants, true
// only in race builds, where its invariant checks are compiled in.
func RequireChecks(t testing.TB, on bool) {
	t.Helper()
	if !on {
		t.Skip("invariant checks run only in race builds")
	}
}
