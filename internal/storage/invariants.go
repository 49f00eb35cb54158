package storage

import "fmt"

// The log's stated invariants (doc.go), checked where they could break:
// in race builds (assertInvariants) each step that moves the log's end,
// its high watermark or its segment list checks them under l.mu before it
// lets go of it, and panics on the first broken one, naming it and the
// values; in other builds every check below compiles away. The checks are
// O(1) per step (O(segments) on the rare steps that rebuild the list:
// Open, a truncation), so the suite pays little for them.

// unlockChecked releases l.mu, held for writing by op. In a race build it
// first checks the log's invariants, and step's own finding (nil: none),
// and panics on the first broken one after releasing the lock, so a test
// that recovers the panic can still close the log.
func (l *Log) unlockChecked(op string, step error) {
	if !assertInvariants {
		l.mu.Unlock()
		return
	}
	err := step
	if err == nil {
		err = l.invariantLocked()
	}
	l.mu.Unlock()
	if err != nil {
		panic(fmt.Sprintf("storage: partition log %s: after %s: invariant broken: %v", l.dir, op, err))
	}
}

// invariantLocked reports the first of the invariants every step keeps
// that the log breaks, or nil. Called under l.mu.
//
//   - the high watermark never passes the log's end (and is the end on a
//     log that is not held);
//   - the flushed high watermark never passes the end: nothing durable
//     speaks past it;
//   - the active segment ends where the log does, the oldest offset is the
//     first segment's base;
//   - segment base offsets increase, each segment beginning where the one
//     before it ends (checked for the newest two: only a roll adds one).
func (l *Log) invariantLocked() error {
	n := len(l.segs)
	active := l.segs[n-1]
	switch {
	case l.hwm > l.end:
		return fmt.Errorf("high watermark %d past the log end %d", l.hwm, l.end)
	case !l.opts.Held && l.hwm != l.end:
		return fmt.Errorf("high watermark %d is not the log end %d on a log that is not held", l.hwm, l.end)
	case l.flushed.Load() > l.end:
		return fmt.Errorf("flushed high watermark %d past the log end %d", l.flushed.Load(), l.end)
	case active.end != l.end:
		return fmt.Errorf("active segment %s ends at %d, the log at %d", active.name(), active.end, l.end)
	case l.oldest != l.segs[0].base:
		return fmt.Errorf("oldest offset %d is not the first segment's base %d", l.oldest, l.segs[0].base)
	}
	if n > 1 {
		return segmentsFollow(l.segs[n-2], active)
	}
	return nil
}

// segmentsFollow: segment base offsets increase, and b begins where a ends
// (a gap recovery found lost is a's range too: it ends at b's base).
func segmentsFollow(a, b *segment) error {
	if a.base >= b.base || a.end != b.base {
		return fmt.Errorf("segment base offsets not increasing and contiguous: %s covers %d..%d, %s begins at %d",
			a.name(), a.base, a.end, b.name(), b.base)
	}
	return nil
}

// allSegmentsChecks is segmentsFollow over the whole list, for the steps
// that rebuild it (Open, a truncation). Called under l.mu, or before the
// log is shared.
func (l *Log) allSegmentsChecks() error {
	if !assertInvariants {
		return nil
	}
	for i := 1; i < len(l.segs); i++ {
		if err := segmentsFollow(l.segs[i-1], l.segs[i]); err != nil {
			return err
		}
	}
	return nil
}

// commitChecks is what a commit's publish (or an Append) adds to the
// invariants, given the log's end and high watermark before it and the
// active segment's index length before it:
//
//   - offsets are contiguous: the first batch begins at the old end, which
//     is where the active segment ended, and each batch where the one
//     before it ended;
//   - a commit never moves the high watermark backward;
//   - commit times never decrease: not below the log's newest (floor), not
//     within the batches;
//   - the active segment's index entries the step added increase in offset
//     and position and lie inside the segment.
//
// Called under l.mu and commitMu, before the floor moves.
func (l *Log) commitChecks(prevEnd, prevHWM, segEnd uint64, idx0 int, reqs []*commitReq, stamps []int64) error {
	if !assertInvariants {
		return nil
	}
	return l.commitInvariants(prevEnd, prevHWM, segEnd, idx0, reqs, stamps)
}

func (l *Log) commitInvariants(prevEnd, prevHWM, segEnd uint64, idx0 int, reqs []*commitReq, stamps []int64) error {
	if prevEnd != segEnd {
		return fmt.Errorf("offsets not contiguous: the log ended at %d, its active segment at %d", prevEnd, segEnd)
	}
	next, floor := prevEnd, l.floor
	for i, r := range reqs {
		if r.base != next {
			return fmt.Errorf("offsets not contiguous: batch %d of the commit begins at %d, the one before ended at %d", i, r.base, next)
		}
		next += uint64(len(r.recs))
		if stamps[i] < floor {
			return fmt.Errorf("commit time decreases: batch %d stamped %d after %d", i, stamps[i], floor)
		}
		floor = stamps[i]
	}
	if l.hwm < prevHWM {
		return fmt.Errorf("commit moved the high watermark backward from %d to %d", prevHWM, l.hwm)
	}
	return indexChecks(l.segs[len(l.segs)-1], idx0)
}

// indexChecks: the index entries of s from idx0 on (and the one before
// them) increase in offset and position, and the newest lies inside s.
func indexChecks(s *segment, idx0 int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.idx
	if idx0 >= len(idx) {
		return nil
	}
	for i := max(idx0, 1); i < len(idx); i++ {
		if a, b := idx[i-1], idx[i]; a.offset >= b.offset || a.pos >= b.pos {
			return fmt.Errorf("index entries of %s not increasing: (offset %d, byte %d) then (offset %d, byte %d)",
				s.name(), a.offset, a.pos, b.offset, b.pos)
		}
	}
	if e := idx[len(idx)-1]; e.offset >= s.end || e.pos >= s.size {
		return fmt.Errorf("index entry (offset %d, byte %d) of %s past its end (offset %d, byte %d)", e.offset, e.pos, s.name(), s.end, s.size)
	}
	return nil
}

// indexLen is the active segment's index length before a step adds to it
// (0 outside race builds: only the checks read it).
func indexLen(s *segment) int {
	if !assertInvariants {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.idx)
}
