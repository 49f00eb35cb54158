package testutil

import "fmt"

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
