package httpapi

import (
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
)

// TestSuspectsOrderOwnersThatDidNotAnswerLast: a node whose forward failed
// with a 503 (unreachable, timed out) goes after the others, in order; an
// answer, even a refusal, from it restores its place; other failures
// (a 404 relayed as an error) do not make a suspect.
func TestSuspectsOrderOwnersThatDidNotAnswerLast(t *testing.T) {
	var s suspects
	nodes := []string{"n1", "n2", "n3", "n4"}
	if got := s.last(nodes); !slices.Equal(got, nodes) {
		t.Fatalf("no suspects: %v, want %v", got, nodes)
	}
	s.note("n1", apierr.Unavailable(time.Second, "node n1 unreachable"))
	s.note("n3", apierr.Unavailable(time.Second, "node n3 unreachable"))
	s.note("n2", apierr.NotFound("no such thing"))
	if got, want := s.last(nodes), []string{"n2", "n4", "n1", "n3"}; !slices.Equal(got, want) {
		t.Fatalf("with n1 and n3 suspect: %v, want %v", got, want)
	}
	if !slices.Equal(nodes, []string{"n1", "n2", "n3", "n4"}) {
		t.Fatalf("last reordered its argument: %v", nodes)
	}
	s.note("n1", nil)
	if got, want := s.last(nodes), []string{"n1", "n2", "n4", "n3"}; !slices.Equal(got, want) {
		t.Fatalf("after n1 answered: %v, want %v", got, want)
	}
}
