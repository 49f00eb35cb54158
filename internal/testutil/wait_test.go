package testutil

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	ok := poll(time.Minute, func() bool { return calls.Add(1) == 5 })
	if !ok || calls.Load() != 5 {
		t.Fatalf("poll = %v after %d calls, want true after exactly 5", ok, calls.Load())
	}
}

func TestPollChecksAtOnceWithoutWaiting(t *testing.T) {
	var calls atomic.Int32
	// A zero deadline still gets the first check: a condition that
	// already holds never fails, however short the wait.
	if !poll(0, func() bool { calls.Add(1); return true }) || calls.Load() != 1 {
		t.Fatalf("calls = %d, want 1", calls.Load())
	}
}

func TestPollGivesUpAtTheDeadline(t *testing.T) {
	var calls atomic.Int32
	if poll(20*time.Millisecond, func() bool { calls.Add(1); return false }) {
		t.Fatal("poll of a condition that never holds returned true")
	}
	if calls.Load() < 2 {
		t.Fatalf("cond checked %d times, want it polled more than once", calls.Load())
	}
}

// recorder is a testing.TB that records Fatalf instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestEventuallyFailsNamingWhat(t *testing.T) {
	r := &recorder{TB: t}
	Eventually(r, time.Millisecond, "the moon", func() bool { return false })
	if !strings.Contains(r.failed, "the moon") {
		t.Fatalf("Eventually of a false condition failed with %q, want it to name what it waited for", r.failed)
	}
	r = &recorder{TB: t}
	WaitFor(r, "the sun", func() bool { return true })
	if r.failed != "" {
		t.Fatalf("WaitFor of a true condition failed: %s", r.failed)
	}
}
