// Package testutil holds what every package's tests share and nothing
// else: waiting for a condition with a deadline, and catching a panic to
// read its message (PanicOf, for the invariants packages check in race
// builds). It is imported only by
// _test.go files (the arrow test refuses it in production code) and
// imports nothing of ours.
//
// # The rule it keeps
//
// Tests never sleep a fixed time and hope: they wait on the condition they
// need, polling it, and fail with what they were waiting for once a
// generous deadline passes. The deadline is a hang detector, never a
// timing assertion, so it is long (DefaultWait) and a slow machine only
// makes the test slower, not red.
package testutil
