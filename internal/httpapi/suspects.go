package httpapi

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/apierr"
)

// suspectFor is how long an owner that failed to answer a forwarded call
// is tried after the others by unpinned consumes. Short: it only orders
// attempts, it never refuses one, and a pinned request always tries.
const suspectFor = 10 * time.Second

// suspects remembers owners that did not answer a forwarded data-plane
// call (frozen, partitioned, gone). An unpinned consume tries every other
// owner first, so one stuck node costs a pinned client its 503, not every
// unpinned client a forward timeout per round. The zero value is ready.
type suspects struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// note records the outcome of a forward to node: a transport failure (the
// 503 of an owner that could not be reached in time) makes it a suspect,
// an answer clears it.
func (s *suspects) note(node string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.until, node)
		return
	}
	if apierr.Status(err) != http.StatusServiceUnavailable {
		return
	}
	if s.until == nil {
		s.until = map[string]time.Time{}
	}
	s.until[node] = time.Now().Add(suspectFor)
}

// is reports whether node failed to answer within the last suspectFor.
func (s *suspects) is(node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.until[node]
	if ok && time.Now().After(t) {
		delete(s.until, node)
		return false
	}
	return ok
}

// last returns nodes with the suspects moved to the end, otherwise in
// their order.
func (s *suspects) last(nodes []string) []string {
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(a, b string) int {
		sa, sb := s.is(a), s.is(b)
		switch {
		case sa == sb:
			return 0
		case sb:
			return -1
		}
		return 1
	})
	return out
}
