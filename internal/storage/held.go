package storage

import (
	"errors"
	"fmt"
)

// A held log (Options.Held) is a replica of a replicated partition
// (package replica). Its records are durable here on return of Commit or
// Append, but readers — consume, replay, fan-out, anything using Read,
// HWM or Notify — see only what the replication layer released: the
// committed point, which a quorum holds. The invariant:
//
//	on a held log nothing is visible past what Release allowed, and
//	Release never passes End.
//
// End is the local durable end (every record below it was verified here
// and made durable, by an fdatasync or the journal), Written the written
// end (verified, maybe not durable yet: a commit publishes there first); ReadTo reads up to
// Written, for a follower's fetch; EndNotify wakes whoever waits for
// Written to move. On a log that is not held, End == Written == HWM,
// Release does nothing and EndNotify is Notify.

var (
	// ErrNotHeld refuses replication's writes (Append, SaveReplicaState)
	// on a log that was not opened held.
	ErrNotHeld = errors.New("partition log is not held (not opened as a replica)")
	// ErrAppendMismatch is wrapped by every Append refused because its
	// records do not continue the log (first offset, a gap, commit times).
	ErrAppendMismatch = errors.New("records do not continue the log")
	// ErrBelowCommitted is wrapped by a TruncateTo refused because it
	// would cut records readers may have seen (below HWM).
	ErrBelowCommitted = errors.New("truncation below the visible high watermark")
)

// GapError is ReadTo's answer when the first record asked for is
// unreadable (a damaged frame, or a range recovery found lost): records
// [From, To) cannot be copied from here. Read would hand the same range
// to a reader as Skipped; a replica cannot replicate a hole.
type GapError struct{ From, To uint64 }

func (e *GapError) Error() string {
	return fmt.Sprintf("records %d..%d are unreadable in this log (damaged or lost); they cannot be copied", e.From, e.To)
}

// End is the local durable end: one past the last record fsynced and
// verified here. HWM() <= End() <= Written(). On a log that is not held
// it is the end (lazy commits included: the HWM).
func (l *Log) End() uint64 {
	if l.opts.Held {
		return l.flushed.Load()
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.end
}

// Written is one past the last record written and verified here, durable
// or not yet (replica.Log): a held log's commit publishes its records to
// ReadTo before its fdatasync ends, so that followers copy them
// meanwhile. A crash of the machine may take back the records between
// End and Written; those were never acknowledged (the committed point
// never passes the leader's End).
func (l *Log) Written() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.end
}

// Release moves the visible high watermark of a held log up to
// min(upTo, End()) and wakes readers (Notify); it never moves it down. On
// a log that is not held it does nothing and returns nil: there the HWM is
// End already.
func (l *Log) Release(upTo uint64) error {
	if !l.opts.Held {
		return nil
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	to := min(upTo, l.flushed.Load())
	moved := to > l.hwm
	if moved {
		l.hwm = to
	}
	l.unlockChecked("release", nil)
	if moved {
		l.notify.Fire()
	}
	return nil
}

// EndNotify returns a channel closed when Written next moves (a commit's
// publish, before its fdatasync; an Append; a truncation) or the log
// closes. Take it before re-checking, then block on it. On a log that is
// not held it is Notify.
func (l *Log) EndNotify() <-chan struct{} { return l.endNote.Wait() }

// ReadTo reads records from `from` up to Written() — released or not,
// durable here or not yet: what a follower fetches — at most maxRecords and maxBytes of keys and payloads
// (at least one record when one is readable). Frames are verified as by
// Read; an unreadable first record is a *GapError (counted and logged as a
// skip once, as Read does), and records before damage are returned
// without it. The records may alias shared frames: read-only.
func (l *Log) ReadTo(from uint64, maxRecords, maxBytes int) ([]Record, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	res, err := l.readLocked(from, l.end, maxRecords, maxBytes, NoDueLimit)
	if err != nil {
		return nil, err
	}
	if res.Skipped > 0 {
		return nil, &GapError{From: res.SkippedFrom, To: res.SkippedFrom + res.Skipped}
	}
	return res.Records, nil
}

// Append writes records a leader committed, keeping each record's Offset
// and CommittedAt (and key, headers, payload): one frame, written,
// fdatasynced (or journaled: journal.go), read back and verified, so they
// are durable on return. They
// become visible only by Release. The first Offset must be End(), offsets
// contiguous, commit times never decreasing and none below the log's
// newest: otherwise an error wrapping ErrAppendMismatch, and nothing is
// written. I/O failures follow the sticky-failure rule of Commit
// (fence.go). Only a held log appends (ErrNotHeld).
func (l *Log) Append(recs []Record) error {
	return l.appendHeld(func(end uint64) (heldBatch, error) {
		if len(recs) == 0 {
			return heldBatch{}, ErrEmptyBatch
		}
		if err := continues(recs, end, l.floor); err != nil {
			return heldBatch{}, err
		}
		frames, bases, at, err := l.keptFrames(end, recs)
		return heldBatch{frames: frames, bases: bases, at: at, n: len(recs),
			reqs: []*commitReq{{base: end, recs: recs}}, stamps: []int64{recs[0].CommittedAt},
			last: recs[len(recs)-1].CommittedAt}, err
	})
}

// heldBatch is what Append and AppendFrames write: frames back to back,
// each one's base offset and position among them, and what the log's
// bookkeeping needs of their records.
type heldBatch struct {
	frames []byte
	bases  []uint64
	at     []int64
	n      int          // records
	reqs   []*commitReq // per frame or batch: base and records (commitChecks)
	stamps []int64      // each req's first commit time
	last   int64        // the last record's commit time
	// sources are the WAL sources the frames carry (origin → highest
	// seq), which the log's applied seqs take in as recovery would.
	sources map[uint64]uint64
}

// appendHeld is the write both Append and AppendFrames share, under the
// log's commit lock: prepare builds the batch from the log's end (and
// refuses, changing nothing, what does not continue it), then the frames
// are written, made durable, verified, indexed and published.
func (l *Log) appendHeld(prepare func(end uint64) (heldBatch, error)) error {
	if !l.opts.Held {
		return ErrNotHeld
	}
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if l.failed != nil {
		return l.failed
	}
	l.mu.RLock()
	closed, end, active := l.closed, l.end, l.segs[len(l.segs)-1]
	l.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	b, err := prepare(end)
	if err != nil {
		return err
	}
	if active.size > 0 && active.size+int64(len(b.frames)) > l.opts.SegmentBytes {
		if active, err = l.roll(); err != nil {
			return err
		}
	}
	pos := active.size
	if err := l.writeVerified(active, b.frames, pos, len(b.bases), l.jnl == nil); err != nil {
		return err
	}
	if l.jnl != nil {
		if err := l.jnl.Write(l, active.path, pos, b.frames); err != nil {
			return l.fence(active, pos, "journal", err)
		}
		l.fileDirty = true
	}
	l.mu.Lock()
	prevHWM, segEnd, idx0 := l.hwm, active.end, indexLen(active)
	active.mu.Lock()
	for i, base := range b.bases {
		active.addIndex(base, pos+b.at[i])
	}
	if active.oldestAt < 0 {
		active.oldestAt = b.stamps[0]
	}
	active.newestAt = b.last
	active.mu.Unlock()
	active.size = pos + int64(len(b.frames))
	active.end = end + uint64(b.n)
	l.end = active.end
	l.unlockChecked("append", l.commitChecks(end, prevHWM, segEnd, idx0, b.reqs, b.stamps))
	for o, q := range b.sources {
		l.applied[o] = max(l.applied[o], q)
	}
	l.flushedPos = active.size
	l.flushed.Store(active.end)
	l.floor = b.last
	l.endNote.Fire()
	return nil
}

// keptFrames encodes an Append's records as frames (encodeKept), one per
// run of records a frame can name by their WAL sources — records of one
// origin with ascending seqs, or records of none — so the copy keeps every
// record's message id (frame.go, the ids flag). It returns the frames
// back to back, each one's base offset and its position among them.
func (l *Log) keptFrames(base uint64, recs []Record) (frames []byte, bases []uint64, at []int64, err error) {
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].Origin == recs[i].Origin && (recs[i].Origin == 0 || recs[j].Seq > recs[j-1].Seq) {
			j++
		}
		f, err := l.enc.encodeKept(base+uint64(i), recs[i:j])
		if err != nil {
			return nil, nil, nil, err
		}
		bases, at = append(bases, base+uint64(i)), append(at, int64(len(frames)))
		frames = append(frames, f...)
		i = j
	}
	return frames, bases, at, nil
}

// continues checks that recs continue a log ending at end whose newest
// commit time is floor.
func continues(recs []Record, end uint64, floor int64) error {
	if recs[0].Offset != end {
		return fmt.Errorf("append: %w: the first record has offset %d, the log ends at %d", ErrAppendMismatch, recs[0].Offset, end)
	}
	if recs[0].CommittedAt < floor {
		return fmt.Errorf("append: %w: the first record's commit time %d is below the log's newest %d", ErrAppendMismatch, recs[0].CommittedAt, floor)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Offset != recs[i-1].Offset+1 {
			return fmt.Errorf("append: %w: offset %d follows %d at record %d", ErrAppendMismatch, recs[i].Offset, recs[i-1].Offset, i)
		}
		if recs[i].CommittedAt < recs[i-1].CommittedAt {
			return fmt.Errorf("append: %w: commit time %d follows %d at record %d", ErrAppendMismatch, recs[i].CommittedAt, recs[i-1].CommittedAt, i)
		}
	}
	return nil
}
