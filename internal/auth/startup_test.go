package auth

import (
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// Failed logins while the node cannot check credentials yet (no users in
// its replica, or not ready) are refused but do not slow their source;
// once start-up is over they do, and stay counted through later dips.
func TestStartupFailuresDoNotSlowTheSource(t *testing.T) {
	f := &fakeUsers{byName: map[string]meta.User{}}
	failed := 0
	a := NewAuthenticator(f, func() { failed++ })
	slept := 0
	a.sleep = func(time.Duration) { slept++ }
	ready := false
	a.CountFailuresOnceReady(func() bool { return ready })

	fail := func(n int) {
		t.Helper()
		for range n {
			if _, ok := a.Authenticate("admin", "root-password", "10.0.0.9"); ok {
				t.Fatal("a login succeeded")
			}
		}
	}
	if ok, why := a.Ready(); ok || why == "" {
		t.Fatalf("Ready with no users: %v %q", ok, why)
	}
	fail(3 * freeFailures) // no users here yet
	f.put(t, "admin", "other-password")
	if ok, _ := a.Ready(); !ok {
		t.Fatal("not Ready once a user exists")
	}
	fail(3 * freeFailures) // users, but the node is not ready yet
	if slept != 0 {
		t.Fatalf("start-up failures slowed the source %d times", slept)
	}
	if failed != 6*freeFailures {
		t.Fatalf("%d failures counted in the metric, want %d: the metric counts them all", failed, 6*freeFailures)
	}
	ready = true
	fail(freeFailures)
	if slept != 0 {
		t.Fatalf("slowed within the first %d failures after start-up", freeFailures)
	}
	ready = false // a later dip does not reopen the free window
	fail(1)
	if slept != 1 {
		t.Fatalf("failure %d after start-up slept %d times, want once", freeFailures+1, slept)
	}
}
