package fanout

import (
	"context"
	"errors"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/storage"
)

// closedPoll is how often a cursor on a closed, silent parent partition
// looks at its directory for backlog during a long-poll: the log stays
// closed (no notify to wake on) until there is work.
const closedPoll = 100 * time.Millisecond

// readSlab reads the next slab from pos (rules: slab pacing, delay gate,
// sleep until due): it long-polls up to SlabPoll for a first record, then
// tops up until a batch cap or the linger runs out. A delay child's every
// read carries MaxCommittedAt = now − delay; at the first record that is
// not due it stops, and with nothing due the cursor sleeps until that
// record is due (capped), which costs the same for one pending record as
// for a million.
//
// It returns the records (aliasing the parent's decoded frames) and the
// offset after them. next > pos with no records means an unreadable range
// was stepped over.
func (e *Engine) readSlab(ctx context.Context, c *cursor, pos uint64) ([]storage.Record, uint64, error) {
	k := c.key
	delay := time.Duration(c.link.delayMs) * time.Millisecond
	deadline := e.clk.Now().Add(e.cfg.SlabPoll)
	var (
		out     []storage.Record
		bytes   int
		next    = pos
		firstAt time.Time
	)
	for {
		if ctx.Err() != nil {
			return nil, pos, ctx.Err()
		}
		l := e.logs.Peek(k.parent, k.partition)
		if l == nil {
			// A closed, silent parent stays closed: its directory says
			// whether there is backlog, and only backlog opens it.
			st, err := e.logs.Describe(k.parent, k.partition)
			if err == nil && st.Exact && st.HighWatermark <= next && st.OldestOffset <= next {
				e.setLag(c, st.HighWatermark, next)
				e.setDueLag(c, 0) // nothing unread: at the due frontier
				left := deadline.Sub(e.clk.Now())
				if left <= 0 || !e.sleep(ctx, min(left, closedPoll)) {
					return out, next, ctx.Err()
				}
				continue
			}
		}
		if l == nil || l.HWM() > next {
			var err error
			if l, err = e.logs.Get(k.parent, k.partition); err != nil { // work to do: stamp the log
				return nil, pos, err
			}
		}
		ch := l.Notify()
		gate := int64(storage.NoDueLimit)
		if delay > 0 {
			// This node's clock against stamps of whichever node committed
			// each record: after a move, early or late by the skew, never
			// early on this clock (rule: skew across a move).
			gate = e.clk.Now().Add(-delay).UnixMilli()
		}
		res, err := l.Read(next, e.cfg.MaxBatchRecords-len(out), e.cfg.MaxBatchBytes-bytes, gate)
		switch {
		case errors.Is(err, storage.ErrClosed):
			continue // evicted under us: the next pass reopens it
		case err != nil && len(out) > 0:
			return out, next, nil // deliver what we have; the error comes back next read
		case err != nil:
			return nil, pos, err
		case res.Skipped > 0:
			if len(out) > 0 {
				return out, next, nil
			}
			return nil, res.Next, nil
		}
		out = append(out, res.Records...)
		for _, r := range res.Records {
			bytes += len(r.Key) + len(r.Payload)
		}
		next = res.Next
		hwm := l.HWM()
		e.setLag(c, hwm, next)
		switch {
		case len(out) > 0:
			// How far behind the due frontier this cursor runs (rule: due
			// lag): the age past due of the oldest record it has yet to
			// deliver.
			e.setDueLag(c, max(gate-out[0].CommittedAt, 0))
		case next >= hwm:
			// Caught up with nothing unread: at the due frontier, so 0 —
			// not the lag of the last slab, which would alert on a delay
			// child whose parent went quiet.
			e.setDueLag(c, 0)
		}
		if len(out) >= e.cfg.MaxBatchRecords || bytes >= e.cfg.MaxBatchBytes {
			return out, next, nil
		}
		if res.NotDueAt > 0 {
			if len(out) > 0 {
				return out, next, nil
			}
			e.setDueLag(c, 0) // the next record is not due yet: at the frontier
			// Nothing after the first not-due record is due either:
			// sleep until it is, never longer than the cap.
			due := time.UnixMilli(res.NotDueAt).Add(delay)
			e.sleep(ctx, min(due.Sub(e.clk.Now()), e.cfg.DueWakeCap))
			return nil, next, ctx.Err()
		}
		var wait time.Duration
		if len(out) > 0 {
			if firstAt.IsZero() {
				firstAt = e.clk.Now()
			}
			if wait = e.cfg.Linger - clock.Since(e.clk, firstAt); wait <= 0 || next < hwm {
				if next < hwm {
					continue // more is committed already: top up at once
				}
				return out, next, nil
			}
		} else if wait = deadline.Sub(e.clk.Now()); wait <= 0 {
			return nil, next, nil
		}
		t := e.clk.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-ch:
		case <-t.C():
		}
		t.Stop()
	}
}

func (e *Engine) setLag(c *cursor, hwm, next uint64) {
	e.m.FanoutLag.WithLabelValues(e.labels(c.key)...).Set(float64(hwm - min(hwm, next)))
}

// setDueLag records how far behind the due frontier a delay child's cursor
// runs, for the listing and narad_fanout_due_lag_seconds (rule: due lag).
func (e *Engine) setDueLag(c *cursor, ms int64) {
	if c.link.delayMs <= 0 {
		return
	}
	c.dueLagMs.Store(ms)
	e.m.FanoutDueLag.WithLabelValues(e.labels(c.key)...).Set(float64(ms) / 1000)
}
