package testutil

import (
	"testing"
	"time"
)

// DefaultWait is WaitFor's deadline: far beyond anything a condition
// should take on a loaded 2-core machine, so it only ever trips on a hang.
const DefaultWait = 10 * time.Second

// maxPoll caps the poll interval: short enough that a test waiting on a
// condition that already holds costs ~nothing, long enough not to spin.
const maxPoll = 10 * time.Millisecond

// WaitFor polls cond until it holds, failing t (naming what) after
// DefaultWait.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Eventually(t, DefaultWait, what, cond)
}

// Eventually polls cond until it holds, failing t (naming what) once
// within has passed. The first check is immediate; the interval then
// doubles from 1 ms to maxPoll.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !poll(within, cond) {
		t.Fatalf("timed out after %v waiting for %s", within, what)
	}
}

// poll reports whether cond held before within passed.
func poll(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	wait := time.Millisecond
	for !cond() {
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(wait, time.Until(deadline)))
		wait = min(2*wait, maxPoll)
	}
	return true
}
