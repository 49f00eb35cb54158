package lease

import (
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// TestAssertionModeFollowsTheRaceTag: in a race build a broken invariant
// panics at the first mutating call after it, naming the invariant; in
// other builds the check is compiled out and the same call returns
// normally. The table is broken by hand (an acked-ahead offset below the
// frontier, which no sequence of calls can produce).
func TestAssertionModeFollowsTheRaceTag(t *testing.T) {
	ops := map[string]func(tb *Table){
		"Reserve":     func(tb *Table) { tb.Reserve(10, 1) },
		"Expire":      func(tb *Table) { tb.Expire() },
		"Ack":         func(tb *Table) { _ = tb.Ack(9, 9) },
		"MarkSkipped": func(tb *Table) { tb.MarkSkipped(20, 21) },
		"Stats":       func(tb *Table) { tb.Stats() },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			tb := New(7, 5, defaultLimits, clock.NewFake(time.Time{}))
			tb.Reserve(10, 3)
			tb.mu.Lock()
			tb.ackedAhead[2] = struct{}{} // below the frontier: settled twice over
			tb.mu.Unlock()

			got := panicOf(func() { op(tb) })
			switch {
			case assertInvariants && !strings.Contains(got, "acked-ahead 2 not above frontier 5"):
				t.Fatalf("race build: %s on a broken table panicked with %q, want the invariant named", name, got)
			case !assertInvariants && got != "":
				t.Fatalf("non-race build: %s panicked with %q, want the check compiled out", name, got)
			}
			// The mutex must be free after the panic, or every later
			// call of a test that recovers would hang.
			if !tb.mu.TryLock() {
				t.Fatal("table left locked after the invariant panic")
			}
			tb.mu.Unlock()
		})
	}
}

func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "non-string panic"
			}
		}
	}()
	f()
	return ""
}
