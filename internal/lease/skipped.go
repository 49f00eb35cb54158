package lease

import (
	"slices"
	"sort"
)

// span is the half-open offset range [lo, hi).
type span struct{ lo, hi uint64 }

// skipSet holds skipped-corrupt offsets above the frontier as sorted,
// disjoint, non-adjacent ranges. Ranges, not a per-offset set, because a
// corrupt segment can cover millions of offsets and must cost O(1) memory.
// In practice it is empty or tiny: a skip at the frontier is absorbed into
// the frontier at once and never stored.
type skipSet struct {
	spans []span
}

// search returns the index of the first span that ends after x.
func (s *skipSet) search(x uint64) int {
	return sort.Search(len(s.spans), func(i int) bool { return s.spans[i].hi > x })
}

// contains reports whether x is skipped.
func (s *skipSet) contains(x uint64) bool {
	i := s.search(x)
	return i < len(s.spans) && s.spans[i].lo <= x
}

// add marks [lo, hi) skipped and returns how many of those offsets were
// already skipped. Overlapping and adjacent spans are merged so that
// frontier advance jumps a whole corrupt region in one step.
func (s *skipSet) add(lo, hi uint64) (already uint64) {
	if lo >= hi {
		return 0
	}
	// First span that overlaps or touches [lo, hi): its hi >= lo.
	i := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].hi >= lo })
	// First span strictly after [lo, hi) and not touching it: its lo > hi.
	j := i
	for j < len(s.spans) && s.spans[j].lo <= hi {
		j++
	}
	merged := span{lo, hi}
	for _, sp := range s.spans[i:j] {
		already += overlap(sp, span{lo, hi})
		merged.lo = min(merged.lo, sp.lo)
		merged.hi = max(merged.hi, sp.hi)
	}
	s.spans = slices.Replace(s.spans, i, j, merged)
	return already
}

// takeFront removes and returns the first span if it starts at or below
// f, which is how the frontier swallows a skipped run.
func (s *skipSet) takeFront(f uint64) (span, bool) {
	if len(s.spans) == 0 || s.spans[0].lo > f {
		return span{}, false
	}
	sp := s.spans[0]
	s.spans = slices.Delete(s.spans, 0, 1)
	return sp, true
}

// dropBelow removes every span that ends at or below f.
func (s *skipSet) dropBelow(f uint64) {
	i := s.search(f)
	s.spans = slices.Delete(s.spans, 0, i)
}

func (s *skipSet) len() int { return len(s.spans) }

// overlap returns the number of offsets in both a and b.
func overlap(a, b span) uint64 {
	lo, hi := max(a.lo, b.lo), min(a.hi, b.hi)
	if lo >= hi {
		return 0
	}
	return hi - lo
}
