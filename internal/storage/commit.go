package storage

import (
	"errors"
	"fmt"
	"time"
)

// commitReq is one caller's batch waiting in the group commit.
type commitReq struct {
	recs    []Record
	now     int64 // the caller's clock, read before queueing (04-storage.md)
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
	if len(recs) == 0 {
		return 0, ErrEmptyBatch
	}
	req := &commitReq{recs: recs, now: l.opts.Now().UnixMilli(), done: make(chan struct{}), promote: make(chan struct{})}
	l.gmu.Lock()
	l.queue = append(l.queue, req)
	lead := !l.leading
	l.leading = true
	l.gmu.Unlock()
	if !lead {
		select {
		case <-req.done:
			return req.base, req.err
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
	return req.base, req.err
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
	closed, base, active := l.closed, l.hwm, l.segs[len(l.segs)-1]
	l.mu.RUnlock()
	if closed {
		fail(group, ErrClosed)
		return
	}
	buf := l.group[:0]
	var pending []*commitReq // encoded into buf, not yet durable
	var stamps []int64
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		pos := active.size
		if err := l.writeVerified(active, buf, pos, len(pending)); err != nil {
			return err
		}
		l.publish(active, pos, buf, pending, stamps)
		buf, pending, stamps = buf[:0], pending[:0], stamps[:0]
		return nil
	}
	floor := l.floor
	for i, r := range group {
		stamp := max(r.now, floor)
		frame, err := l.enc.encode(base, r.recs, stamp)
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
		base += uint64(len(r.recs))
		floor = stamp
	}
	if err := flush(); err != nil {
		fail(pending, err)
	}
	l.group = buf[:0]
}

// publish makes a durable, verified flush visible: index, sizes, HWM,
// floor, record stamps; then the waiters wake. Called under commitMu.
func (l *Log) publish(active *segment, pos int64, buf []byte, reqs []*commitReq, stamps []int64) {
	l.mu.Lock()
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
	l.hwm = active.end
	l.mu.Unlock()
	l.floor = stamps[len(stamps)-1]
	for i, r := range reqs {
		for j := range r.recs {
			r.recs[j].Offset, r.recs[j].CommittedAt = r.base+uint64(j), stamps[i]
		}
		close(r.done)
	}
	l.notify.Fire()
}

// writeVerified writes frames at pos, syncs, reads them back and checks
// every frame's CRC. A write error is undone by truncation and can be
// retried; a sync or verify failure, or an undo that fails, fences the log
// (fence.go).
func (l *Log) writeVerified(s *segment, frames []byte, pos int64, count int) error {
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
	t0 := time.Now()
	if err := s.f.Datasync(); err != nil {
		return l.fence(s, pos, "fdatasync", err)
	}
	if h := l.opts.Hooks.Fsync; h != nil {
		h(time.Since(t0))
	}
	if cap(l.verify) < len(frames) {
		l.verify = make([]byte, len(frames))
	}
	back := l.verify[:len(frames)]
	if _, err := s.f.ReadAt(back, pos); err != nil {
		return l.fence(s, pos, "read back", err)
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
