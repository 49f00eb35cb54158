package httpapi

import (
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
)

// TestRoundOrderRotatesTheLeadAndKeepsSuspectsLast: over three rounds
// of a topic whose partitions are on n1, n2 and n3, each owner leads one
// round and the others follow in ring order; an owner that failed during
// the request is left out, and a suspect goes last whatever the turn.
func TestRoundOrderRotatesTheLeadAndKeepsSuspectsLast(t *testing.T) {
	var s Server
	owners := []string{"n1", "n2", "n3"}
	rings := [][]string{{"n1", "n2", "n3"}, {"n2", "n3", "n1"}, {"n3", "n1", "n2"}}
	seen := map[string]bool{}
	for range 3 {
		got := s.roundOrder(owners, "n1", nil)
		if !slices.ContainsFunc(rings, func(r []string) bool { return slices.Equal(r, got) }) {
			t.Fatalf("round order %v is not the ring from one owner", got)
		}
		seen[got[0]] = true
	}
	if len(seen) != 3 {
		t.Fatalf("over three rounds the leads were %v, want each owner once", seen)
	}
	s.suspects.note("n2", apierr.Unavailable(time.Second, "node n2 unreachable"))
	for range 3 {
		if got := s.roundOrder(owners, "n1", map[string]bool{"n3": true}); !slices.Equal(got, []string{"n1", "n2"}) {
			t.Fatalf("with n3 failed and n2 suspect: %v, want [n1 n2]", got)
		}
	}
}
