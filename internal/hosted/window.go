package hosted

import (
	"context"
	"errors"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// CommitFunc stores records in the partition log. keep are the records to
// store; idx, when not nil, says which of the caller's records they are
// (some were duplicates), so that anything the caller keeps per record
// can be thinned the same way.
type CommitFunc func(keep []storage.Record, idx []int) error

// Dedupe is the owner's commit under a topic's idempotent-produce window
// of windowMs (dedupe.go): it leaves out the records whose msg_id the
// partition stored within the window (or an earlier record of recs
// carries), commits the rest through commit, and remembers their ids once
// commit succeeded. It is the one place the decision is made, on the node
// that commits, so it holds for records from any node's ingress WAL,
// fan-out copies and retries alike. With windowMs ≤ 0 recs are committed
// as they are and the partition's window is forgotten: turned on again,
// it is read from the log anew. now is the commit's time in Unix ms.
//
// It returns how many records were duplicates (counted only when the rest
// was stored). Errors from commit and from reading the log are returned
// as they are (storage.ErrClosed included), for the caller to act on.
func (s *Set) Dedupe(ctx context.Context, name string, partition int, windowMs, now int64, l *storage.Log, recs []storage.Record, commit CommitFunc) (dups int, err error) {
	w := s.window(Key{name, partition}, windowMs > 0)
	if w == nil {
		return 0, commit(recs, nil)
	}
	if err := s.rebuildWindow(name, w, l, now, windowMs); err != nil {
		return 0, err
	}
	idx, dups, c, err := w.admit(ctx, recs, now, windowMs)
	if err != nil {
		return 0, err
	}
	keep := recs
	if idx != nil {
		keep = make([]storage.Record, len(idx))
		for i, j := range idx {
			keep[i] = recs[j]
		}
	}
	if len(keep) > 0 {
		err = commit(keep, idx)
	}
	if n := w.settle(c, keep, err == nil); n > 0 {
		s.hook.DedupeForgotten(name, n)
	}
	if err != nil {
		// A failed commit is retried whole: its duplicates are counted
		// when it succeeds, never twice.
		return 0, err
	}
	return dups, nil
}

// window returns k's id window, creating it when on; when off it drops
// the window the partition had.
func (s *Set) window(k Key, on bool) *idWindow {
	// Nearly always nothing to change (a window in use, or none and none
	// wanted): read-locked, as every commit asks.
	s.mu.RLock()
	p, ok := s.parts[k]
	switch {
	case on && ok && p.window != nil:
		w := p.window
		s.mu.RUnlock()
		return w
	case !on && (!ok || p.window == nil):
		s.mu.RUnlock()
		return nil
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok = s.parts[k]
	if !on {
		if ok && p.window != nil {
			p.window = nil
			s.release(k, p)
		}
		return nil
	}
	if !ok {
		p = s.entry(k)
	}
	if p.window == nil {
		p.window = newIDWindow(s.maxIDs)
	}
	return p.window
}

// rebuildWindow reads w's ids from l when w was not read from this log
// instance, or for a shorter window: the records of l committed within
// the window, the newest maxIDs of them at most. A log opened again may
// hold records this node never committed — those another owner committed
// before a move back, or this process before a restart — and the log is
// the only record of them, so no index file is kept (it could not be
// more current than the log it indexes, and a move carries the log).
func (s *Set) rebuildWindow(name string, w *idWindow, l *storage.Log, now, window int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.log == l && w.builtFor >= window {
		return nil
	}
	ids, err := scanWindow(l, now-window, w.maxIDs)
	if err != nil {
		return err
	}
	clear(w.seen)
	clear(w.fifo)
	w.fifo, w.head = w.fifo[:0], 0
	forgotten := 0
	for _, e := range ids {
		forgotten += w.remember(e.id, e.at)
	}
	if forgotten > 0 {
		s.hook.DedupeForgotten(name, forgotten)
	}
	w.log, w.builtFor = l, window
	return nil
}

// scanWindow returns the ids of l's records committed at or after cutoff,
// in offset order, reading at most the newest maxRecords records. Commit
// times never decrease along a partition (storage's promise), so the
// first record of the window is found by bisection and the scan reads
// only the window's tail: open time is bounded by maxRecords, not by the
// window's length or the topic's rate.
func scanWindow(l *storage.Log, cutoff int64, maxRecords int) ([]seenID, error) {
	hwm := l.HWM()
	lo := l.Oldest()
	if hwm-lo > uint64(maxRecords) {
		lo = hwm - uint64(maxRecords)
	}
	hi := hwm
	for lo < hi {
		mid := lo + (hi-lo)/2
		at, err := commitTimeAt(l, mid, hi)
		if err != nil {
			return nil, err
		}
		if at < cutoff {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	var ids []seenID
	for from := lo; from < hwm; {
		res, err := l.Read(from, 1024, 4<<20, storage.NoDueLimit)
		var below *storage.BelowOldestError
		if errors.As(err, &below) { // retention moved on under the scan
			from = below.Oldest
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, r := range res.Records {
			if id, ok := header.MsgIDOf(r.Headers); ok && r.CommittedAt >= cutoff {
				ids = append(ids, seenID{id: id, at: r.CommittedAt})
			}
		}
		if res.Next <= from {
			break
		}
		from = res.Next
	}
	return ids, nil
}

// commitTimeAt is the commit time of the first readable record at or
// after offset o and before end; past end (only unreadable records left)
// it answers a time no cutoff reaches, so the bisection moves below.
func commitTimeAt(l *storage.Log, o, end uint64) (int64, error) {
	for o < end {
		res, err := l.Read(o, 1, 1, storage.NoDueLimit)
		var below *storage.BelowOldestError
		if errors.As(err, &below) {
			o = below.Oldest
			continue
		}
		if err != nil {
			return 0, err
		}
		if len(res.Records) > 0 {
			return res.Records[0].CommittedAt, nil
		}
		if res.Next <= o {
			break
		}
		o = res.Next // a gap: the next readable record decides
	}
	return 1<<63 - 1, nil
}
