package wal

import "fmt"

// The WAL's stated invariant (doc.go), checked where it could break: in
// race builds (assertInvariants) each step that publishes a batch, adds a
// segment, moves the checkpoint or deletes segments checks the part of it
// that step could break, and panics on a broken one, naming it and the
// values; in other builds every check below compiles away. Each check is
// O(1) per step (O(segments deleted) for a deletion).

// unlockChecked releases w.mu after op; in a race build it panics with
// err, when not nil, once the lock is released.
func (w *WAL) unlockChecked(op string, err error) {
	w.mu.Unlock()
	if assertInvariants && err != nil {
		panic(fmt.Sprintf("wal %s: %s: invariant broken: %v", w.dir, op, err))
	}
}

// publishChecks: a batch made durable continues the seqs without a gap or
// a repeat — it begins one past the newest durable seq (prevLast), which
// is where its segment ended — holds at least one record, and grows the
// segment's durable bytes; the segment's index entries increase in seq
// and byte position. Called under w.mu, after the segment took the batch.
func publishChecks(s *segment, b *batch, prevLast, segLast uint64, prevDurable int64) error {
	if !assertInvariants {
		return nil
	}
	return publishInvariants(s, b, prevLast, segLast, prevDurable)
}

func publishInvariants(s *segment, b *batch, prevLast, segLast uint64, prevDurable int64) error {
	switch {
	case b.first != prevLast+1:
		return fmt.Errorf("seqs not contiguous: batch %d..%d published after durable seq %d", b.first, b.last, prevLast)
	case b.first != segLast+1:
		return fmt.Errorf("seqs not contiguous: batch %d..%d written to %s, whose last seq was %d", b.first, b.last, s.path, segLast)
	case b.last < b.first:
		return fmt.Errorf("batch %d..%d holds no record", b.first, b.last)
	case s.durable <= prevDurable:
		return fmt.Errorf("durable end of %s did not grow: %d after %d", s.path, s.durable, prevDurable)
	}
	if n := len(s.index); n > 1 {
		if a, c := s.index[n-2], s.index[n-1]; a.seq >= c.seq || a.off >= c.off {
			return fmt.Errorf("index of %s not increasing: (seq %d, byte %d) then (seq %d, byte %d)", s.path, a.seq, a.off, c.seq, c.off)
		}
	}
	return nil
}

// segmentChecks: segments are named by increasing first seqs, each new
// one beginning one past the last seq of the one before it, and empty.
// Called under w.mu, after the new segment was appended.
func (w *WAL) segmentChecks() error {
	if !assertInvariants {
		return nil
	}
	n := len(w.segs)
	s := w.segs[n-1]
	if s.last != s.first-1 || s.durable != 0 {
		return fmt.Errorf("new segment %s is not empty (last seq %d, %d bytes)", s.path, s.last, s.durable)
	}
	if n > 1 {
		if p := w.segs[n-2]; p.first >= s.first || p.last+1 != s.first {
			return fmt.Errorf("segment seqs not increasing and contiguous: %s holds %d..%d, the next begins at %d",
				p.path, p.first, p.last, s.first)
		}
	}
	return nil
}

// checkpointChecks: the checkpoint moves only forward (from prev) and
// never passes the durable end: every seq below it was durable.
func checkpointChecks(prev, ckpt, lastSeq uint64) error {
	if !assertInvariants {
		return nil
	}
	switch {
	case ckpt <= prev:
		return fmt.Errorf("checkpoint moved from %d to %d, not forward", prev, ckpt)
	case ckpt > lastSeq+1:
		return fmt.Errorf("checkpoint %d past the durable end: the newest durable seq is %d", ckpt, lastSeq)
	}
	return nil
}

// deleteChecks: segments are deleted only when wholly below a durable
// checkpoint, and never the active one. Called under w.mu with the
// segments chosen for deletion and those kept.
func deleteChecks(doomed, kept []*segment, seq, ckpt uint64) error {
	if !assertInvariants {
		return nil
	}
	if seq > ckpt {
		return fmt.Errorf("deleting below %d, past the durable checkpoint %d", seq, ckpt)
	}
	if len(kept) == 0 {
		return fmt.Errorf("deleting below %d would delete the active segment", seq)
	}
	for _, s := range doomed {
		if s.last >= seq {
			return fmt.Errorf("segment %s deleted while it holds seq %d, not below the checkpoint %d", s.path, s.last, seq)
		}
	}
	return nil
}
