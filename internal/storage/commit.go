package storage

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// commitReq is one caller's batch waiting in the group commit.
type commitReq struct {
	recs    []Record
	src     Source // origin, WAL seqs and laziness (CommitFrom)
	skipped int    // leading records the log held already (by src)
	now     int64  // the caller's clock, read before queueing
	base    uint64
	err     error
	done    chan struct{} // closed when this batch is committed or failed
	promote chan struct{} // closed to make this caller the next leader
}

// Commit appends recs as one frame and makes them durable and visible:
// stamp, encode, write, fdatasync, read back and verify, then move the HWM
// and wake waiters. All or nothing: on error no record of the batch is
// visible. On success each record's Offset and CommittedAt are set and the
// first offset is returned.
//
// Concurrent commits share the disk work (group commit): one caller leads,
// writes the frames of every batch queued so far with one write and one
// fdatasync, verifies each frame, and publishes them in queue order; then
// it hands leadership to the first caller still queued. Each batch keeps
// its own frame, so each stays all-or-nothing.
func (l *Log) Commit(recs []Record) (uint64, error) {
	base, _, err := l.CommitFrom(recs, Source{})
	return base, err
}

// CommitFrom is Commit for records read from an ingress WAL (Source).
// Records whose WAL seq is at or below the highest the log holds from
// src.Origin are skipped — they were committed before, by a dispatch the
// WAL checkpoint did not record — and the rest are committed as one
// frame carrying the origin and its highest seq. skipped is how many
// leading records were left out (they get no Offset); base is the first
// committed one's offset. A lazy commit is published after its read-back
// verifies, without an fdatasync; Flush makes it durable (doc.go).
func (l *Log) CommitFrom(recs []Record, src Source) (base uint64, skipped int, err error) {
	if len(recs) == 0 {
		return 0, 0, ErrEmptyBatch
	}
	if src.Origin != 0 {
		if len(src.Seqs) != len(recs) {
			return 0, 0, fmt.Errorf("commit: %d WAL seqs for %d records", len(src.Seqs), len(recs))
		}
		for i := 1; i < len(src.Seqs); i++ {
			if src.Seqs[i] <= src.Seqs[i-1] {
				return 0, 0, fmt.Errorf("commit: WAL seqs not ascending at record %d (%d after %d)", i, src.Seqs[i], src.Seqs[i-1])
			}
		}
	}
	if src.Origin != 0 {
		for i := range recs {
			recs[i].Origin, recs[i].Seq = src.Origin, src.Seqs[i]
		}
	}
	if src.Origin == 0 || l.opts.Held {
		// Nothing else holds the records: only an fdatasync makes them
		// durable. A held log's commit is acknowledged by replication,
		// which counts this copy as durable: no WAL stands behind it.
		src.Lazy = false
	}
	req := &commitReq{recs: recs, src: src, now: l.opts.Now().UnixMilli(), done: make(chan struct{}), promote: make(chan struct{})}
	l.gmu.Lock()
	l.queue = append(l.queue, req)
	lead := !l.leading
	l.leading = true
	l.gmu.Unlock()
	if !lead {
		select {
		case <-req.done:
			return req.base, req.skipped, req.err
		case <-req.promote:
		}
	}
	// Leading: commit everything queued (our batch included), then pass
	// the lead on, so no caller commits for others forever.
	l.gmu.Lock()
	group := l.queue
	l.queue = nil
	l.gmu.Unlock()
	l.commitGroup(group)
	l.gmu.Lock()
	if len(l.queue) > 0 {
		close(l.queue[0].promote)
	} else {
		l.leading = false
	}
	l.gmu.Unlock()
	<-req.done
	return req.base, req.skipped, req.err
}

// commitGroup commits the queued batches in order. A batch that cannot be
// encoded fails alone; a failed write, sync or verify fails the batches of
// that flush and every later one (their offsets assumed the earlier ones).
// Every batch of the group is answered exactly once, whatever fails: a
// caller left unanswered would block forever.
func (l *Log) commitGroup(group []*commitReq) {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	fail := func(reqs []*commitReq, err error) {
		for _, r := range reqs {
			r.err = err
			close(r.done)
		}
	}
	if l.failed != nil {
		fail(group, l.failed)
		return
	}
	l.mu.RLock()
	closed, base, active := l.closed, l.end, l.segs[len(l.segs)-1]
	l.mu.RUnlock()
	if closed {
		fail(group, ErrClosed)
		return
	}
	buf := l.group[:0]
	var pending []*commitReq // encoded into buf, not yet durable
	var stamps []int64
	sync := false // some batch of buf is not lazy: the flush fdatasyncs
	applied := map[uint64]uint64{}
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		pos := active.size
		// A held log's commit is written, verified and published to ReadTo
		// (Written) before its fdatasync, so that followers copy it while
		// the leader syncs; its callers are answered, and End moves, only
		// once the sync is done (syncActiveLocked; a failure fences the
		// log as for lazy frames readers saw).
		early := l.opts.Held && sync
		if err := l.writeVerified(active, buf, pos, len(pending), sync && !early); err != nil {
			return err
		}
		l.publish(active, pos, buf, pending, stamps, sync && !early)
		if early {
			if err := l.durableLocked(active, pos, buf); err != nil {
				return err
			}
		}
		l.answer(pending, stamps)
		for o, s := range applied {
			l.applied[o] = max(l.applied[o], s)
		}
		clear(applied)
		buf, pending, stamps, sync = buf[:0], pending[:0], stamps[:0], false
		return nil
	}
	floor := l.floor
	for i, r := range group {
		var seq uint64
		if o := r.src.Origin; o != 0 {
			held := max(l.applied[o], applied[o])
			for r.skipped < len(r.recs) && r.src.Seqs[r.skipped] <= held {
				r.skipped++
			}
			r.recs = r.recs[r.skipped:]
			if len(r.recs) == 0 {
				r.base = base // all held already: nothing to write
				close(r.done)
				continue
			}
			seq = r.src.Seqs[len(r.src.Seqs)-1]
		}
		stamp := max(r.now, floor)
		frame, err := l.enc.encode(base, r.recs, stamp, r.src.Origin, seq, r.src.Lazy)
		if err != nil {
			r.err = err
			close(r.done)
			continue
		}
		if used := active.size + int64(len(buf)); used > 0 && used+int64(len(frame)) > l.opts.SegmentBytes {
			if err := flush(); err != nil {
				fail(pending, err) // encoded into the failed flush
				fail(group[i:], err)
				return
			}
			if active, err = l.roll(); err != nil {
				fail(group[i:], err)
				return
			}
		}
		r.base = base
		buf = append(buf, frame...)
		pending = append(pending, r)
		stamps = append(stamps, stamp)
		sync = sync || !r.src.Lazy
		if r.src.Origin != 0 {
			applied[r.src.Origin] = seq
		}
		base += uint64(len(r.recs))
		floor = stamp
	}
	if err := flush(); err != nil {
		fail(pending, err)
	}
	l.group = buf[:0]
}

// publish makes a verified flush visible: index, sizes, end and HWM (on a
// held log the end only, its written end: Release moves the HWM), floor;
// then the waiters wake. synced: the flush was fdatasynced, which made every lazy frame
// before it durable too. The callers are answered apart (answer). Called
// under commitMu.
func (l *Log) publish(active *segment, pos int64, buf []byte, reqs []*commitReq, stamps []int64, synced bool) {
	l.mu.Lock()
	prevEnd, prevHWM, segEnd, idx0 := l.end, l.hwm, active.end, indexLen(active)
	active.mu.Lock()
	off := pos
	for i, r := range reqs {
		active.addIndex(r.base, off)
		if active.oldestAt < 0 {
			active.oldestAt = stamps[i]
		}
		active.newestAt = stamps[i]
		h, _ := parseHeader(buf[off-pos:])
		off += h.frameLen()
	}
	active.mu.Unlock()
	last := reqs[len(reqs)-1]
	active.size = pos + int64(len(buf))
	active.end = last.base + uint64(len(last.recs))
	l.end = active.end
	if !l.opts.Held {
		l.hwm = l.end
	}
	l.unlockChecked("commit", l.commitChecks(prevEnd, prevHWM, segEnd, idx0, reqs, stamps))
	if synced {
		l.flushedPos = active.size
		l.flushed.Store(active.end)
	}
	l.floor = stamps[len(stamps)-1]
	if l.opts.Held {
		l.endNote.Fire() // readers wait for Release
	} else {
		l.notify.Fire()
	}
}

// answer gives a published flush's callers their records' offsets and
// commit times. Called under commitMu.
func (l *Log) answer(reqs []*commitReq, stamps []int64) {
	for i, r := range reqs {
		for j := range r.recs {
			r.recs[j].Offset, r.recs[j].CommittedAt = r.base+uint64(j), stamps[i]
		}
		close(r.done)
	}
}

// writeVerified writes frames at pos, syncs (unless every frame is lazy),
// reads them back and checks every frame's CRC. A lazy read-back comes from
// the page cache: it proves the write landed whole, not that it is on disk
// (Flush does that). A write error is undone by truncation and can be
// retried; a sync or verify failure, or an undo that fails, fences the log
// (fence.go).
func (l *Log) writeVerified(s *segment, frames []byte, pos int64, count int, sync bool) error {
	w0 := time.Now()
	if _, err := s.f.WriteAt(frames, pos); err != nil {
		if terr := s.f.Truncate(pos); terr != nil {
			return l.fence(s, pos, "undo a failed write", fmt.Errorf("%w (the write failed first: %v)", terr, err))
		}
		return &IOError{Op: "write", Path: s.path, Err: err}
	}
	if h := l.opts.Hooks.Flush; h != nil {
		h(time.Since(w0))
	}
	if sync {
		t0 := time.Now()
		if err := s.f.Datasync(); err != nil {
			return l.fence(s, pos, "fdatasync", err)
		}
		if h := l.opts.Hooks.Fsync; h != nil {
			h(time.Since(t0))
		}
	}
	if cap(l.verify) < len(frames) {
		l.verify = make([]byte, len(frames))
	}
	back := l.verify[:len(frames)]
	if _, err := s.f.ReadAt(back, pos); err != nil {
		return l.fence(s, pos, "read back", err)
	}
	// The bytes read back must be the bytes written, not merely frames
	// that check: a write lost or sent elsewhere leaves older frames
	// there, each with a valid CRC of its own. The CRC walk then checks
	// what was encoded in memory before the write.
	if !bytes.Equal(back, frames) {
		at := 0
		for at < len(back) && back[at] == frames[at] {
			at++
		}
		return l.fence(s, pos, "verify", fmt.Errorf("byte %d reads back other than written", pos+int64(at)))
	}
	for i, off := 0, 0; i < count; i++ {
		h, err := parseHeader(back[off:])
		if err == nil && int64(off)+h.frameLen() > int64(len(back)) {
			err = errors.New("frame runs past what was written")
		}
		if err == nil && frameCRC(back[off:off+FrameHeaderSize], back[off+FrameHeaderSize:off+int(h.frameLen())]) != h.crc {
			err = errors.New("crc mismatch")
		}
		if err != nil {
			return l.fence(s, pos, "verify", fmt.Errorf("frame at byte %d: %w", pos+int64(off), err))
		}
		off += int(h.frameLen())
	}
	return nil
}
