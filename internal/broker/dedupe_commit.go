package broker

import (
	"context"
	"errors"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// validDedupeWindow checks the topic field dedupe_window_ms.
func validDedupeWindow(v int64) error {
	if v != 0 && (v < minDedupeWindowMs || v > maxDedupeWindowMs) {
		return apierr.BadRequest("dedupe_window_ms must be 0 (off) or %d..%d, got %d", minDedupeWindowMs, maxDedupeWindowMs, v)
	}
	return nil
}

// commitFunc stores records in the partition log. keep are the records
// to store; idx, when not nil, says which of the caller's records they are
// (some were duplicates), so that anything the caller keeps per record
// can be thinned the same way.
type commitFunc func(keep []storage.Record, idx []int) error

// dedupe is the owner's commit under t's idempotent-produce window
// (dedupe.go): it leaves out the records whose msg_id the partition stored
// within the window (or an earlier record of recs carries), commits the
// rest through commit, and remembers their ids once commit succeeded. It
// is the one place the decision is made, on the node that commits, so it
// holds for records from any node's ingress WAL, fan-out copies and
// retries alike. A topic without a window commits recs as they are.
//
// Errors from commit and from reading the log are returned as they are
// (storage.ErrClosed included), for the caller to act on.
func (b *Broker) dedupe(ctx context.Context, t meta.Topic, p int, l *storage.Log, recs []storage.Record, commit commitFunc) error {
	ts := b.topicState(t.Name)
	if t.DedupeWindowMs <= 0 {
		ts.dedupe.resetIfAny()
		return commit(recs, nil)
	}
	window := t.DedupeWindowMs
	w := ts.dedupe.get(p, b.cfg.DedupeMaxIDs)
	now := b.cfg.Now().UnixMilli()
	if err := b.rebuildWindow(t.Name, w, l, now, window); err != nil {
		return err
	}
	idx, dups, c, err := w.admit(ctx, recs, now, window)
	if err != nil {
		return err
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
		b.m.DedupeForgotten.WithLabelValues(t.Name).Add(float64(n))
	}
	if err == nil && dups > 0 {
		// Counted once the rest is stored: a failed commit is retried
		// whole, and its duplicates would be counted twice.
		b.m.Deduplicated.WithLabelValues(t.Name).Add(float64(dups))
	}
	return err
}

// rebuildWindow reads w's ids from l when w was not read from this log
// instance, or for a shorter window: the records of l committed within
// the window, the newest maxIDs of them at most. A log opened again may
// hold records this node never committed — those another owner committed
// before a move back, or this process before a restart — and the log is
// the only record of them, so no index file is kept (it could not be
// more current than the log it indexes, and a move carries the log).
func (b *Broker) rebuildWindow(topic string, w *idWindow, l *storage.Log, now, window int64) error {
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
		b.m.DedupeForgotten.WithLabelValues(topic).Add(float64(forgotten))
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
