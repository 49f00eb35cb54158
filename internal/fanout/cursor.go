package fanout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
)

// cursor is one running (parent partition, child) copier.
type cursor struct {
	key      cursorKey
	link     link
	cancel   context.CancelFunc
	done     chan struct{}
	stopping atomic.Bool

	pos      atomic.Uint64 // next parent offset to copy, once known
	started  atomic.Bool
	dueLagMs atomic.Int64

	// Remote children only (rules: refusal stops the link, acked time): the
	// link state, the commit time of the last record the target
	// acknowledged, and why the link is not running (nil while it is).
	state   atomic.Value // string
	ackedAt atomic.Int64
	detail  atomic.Pointer[linkDetail]

	checks cursorChecks // race builds only (invariants.go)
}

func (c *cursor) stop() {
	if c.stopping.CompareAndSwap(false, true) {
		c.cancel()
	}
}

var (
	errStopped  = errors.New("link changed: cursor stops")
	errDeferred = errors.New("anchor not confirmed by the leader: deferred")
)

func (e *Engine) startCursor(k cursorKey, l link) *cursor {
	ctx, cancel := context.WithCancel(context.Background())
	c := &cursor{key: k, link: l, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer func() {
			e.deleteSeries(k)
			// done closes before the reconciler hears of the exit: a tick
			// that sees exited must also find done closed, or its pass
			// keeps the dead cursor in running, comes out clean, and every
			// tick after it skips (rule: skip unchanged ticks) with this
			// partition uncopied.
			close(c.done)
			if h := e.exitHook; h != nil {
				h(k)
			}
			e.rec.exited.Store(true)
		}()
		err := e.run(ctx, c)
		switch {
		case err == nil, errors.Is(err, context.Canceled), errors.Is(err, errStopped):
		case errors.Is(err, errDeferred):
			e.m.FanoutDeferred.Inc()
			e.cfg.Logger.Info("fan-out cursor deferred", "parent", k.parent, "child", k.child, "partition", k.partition, "err", err)
		default:
			e.m.Errors.WithLabelValues("fanout", "cursor").Inc()
			e.cfg.Logger.Warn("fan-out cursor stopped", "parent", k.parent, "child", k.child, "partition", k.partition, "err", err)
		}
	}()
	return c
}

func (e *Engine) labels(k cursorKey) []string {
	return []string{k.parent, k.child, strconv.Itoa(k.partition)}
}

// deleteSeries removes the cursor's gauges as it stops (rule: gauges leave
// with the cursor): the next owner's cursor sets them, so a sum by parent
// and child counts each partition once.
func (e *Engine) deleteSeries(k cursorKey) {
	e.m.FanoutLag.DeleteLabelValues(e.labels(k)...)
	e.m.FanoutDueLag.DeleteLabelValues(e.labels(k)...)
	e.refreshLinkState(k.parent, k.child, k)
}

// run is the cursor loop: read a slab, bucket it, commit every bucket, and
// only then advance the cursor file (rule: commit before advance).
func (e *Engine) run(ctx context.Context, c *cursor) error {
	k := c.key
	dir, err := e.logs.Dir(k.parent, k.partition)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, CursorFileName(k.child))
	// Owned from before the first read to after the last write: the orphan
	// sweep never removes a path a running cursor owns (sweep.go).
	if !e.owned.own(path, c) {
		return errPathOwned
	}
	defer e.owned.release(path, c)
	pos, err := e.startPosition(ctx, c, path)
	if err != nil {
		return err
	}
	cf, err := OpenCursorFile(e.cfg.FS, path)
	if err != nil {
		return err
	}
	defer cf.Close()
	c.checks.start(pos)
	c.pos.Store(pos)
	c.started.Store(true)
	dropped := e.droppedCounter(k.parent, k.child)
	filtered := e.filteredCounter(k.parent, k.child)
	var sf slabFilter
	for ctx.Err() == nil {
		slab, next, err := e.readSlab(ctx, c, pos)
		var below *storage.BelowOldestError
		if errors.As(err, &below) {
			// Drop-behind: retention deleted records this cursor had
			// not read. Skip them, count them: bounded, alarmed loss.
			n := below.Oldest - pos
			dropped.Add(n)
			e.m.FanoutDropped.WithLabelValues(k.parent, k.child).Add(float64(n))
			e.cfg.Logger.Warn("fan-out drop-behind", "parent", k.parent, "child", k.child, "partition", k.partition, "dropped", n)
			c.checks.clear(below.Oldest)
			if err := e.advance(ctx, c, cf, below.Oldest); err != nil {
				return err
			}
			pos = below.Oldest
			c.pos.Store(pos)
			continue
		}
		if err != nil {
			return err
		}
		n := len(slab)
		if n > 0 {
			end := slab[n-1].Offset + 1
			// Rule: filtered links. The filter is the child record's now:
			// a change applies from the next slab.
			child, ok := e.meta.Topic(k.child)
			if !ok || child.AttachEpoch != c.link.epoch || child.Parent != k.parent {
				return errStopped
			}
			f, err := sf.of(child)
			if err != nil {
				return fmt.Errorf("filter of the link: %w", err)
			}
			if f != nil {
				want := c.checks.matching(f, slab)
				var skipped int
				slab, skipped = sf.keep(f, slab)
				c.checks.kept(want, slab)
				if skipped > 0 {
					filtered.Add(uint64(skipped))
					e.m.FanoutFiltered.WithLabelValues(k.parent, k.child).Add(float64(skipped))
				}
				n = len(slab)
			}
			// The slab is handed over, not kept: across a bucket outage
			// only commitSlab's copy of the failed records stays live.
			if n > 0 {
				if err := e.commitSlab(ctx, c, &slab, child.FanoutEnvelope); err != nil {
					return err
				}
			}
			// Every record below end is committed, or one the filter does
			// not match (a documented skip).
			c.checks.clear(end)
		} else {
			c.checks.clear(next) // an unreadable range, or nothing
		}
		if next == pos {
			continue
		}
		// Every bucket of the slab is committed: only now may the durable
		// offset pass its records. (A skipped unreadable range is advanced
		// over the same way; storage counted it as recorded loss.)
		if err := e.advance(ctx, c, cf, next); err != nil {
			return err
		}
		pos = next
		c.pos.Store(pos)
		e.m.FanoutCommitted.WithLabelValues(k.parent, k.child).Add(float64(n))
	}
	return ctx.Err()
}

// advance durably records next in the cursor file (rule: commit before
// advance), and does not return until it has, the link stopped, or the
// error is not the disk's.
//
// A failed write or fdatasync (a full disk, an I/O error) leaves the
// file's durable content unknown: the old record, the new one, or a torn
// one readers take for corrupt. Each of them is safe — the child has
// committed everything below next — but the cursor must not report or act
// on next before it is durable. So it holds its position in memory and
// rewrites the whole record, backing off 1 s doubling to 30 s, until a
// write and its fdatasync both succeed: rewriting re-dirties the page, so
// a retried fdatasync writes it again rather than trusting a page the
// kernel may have marked clean after the failure. It never exits over it:
// an exit would restart from the file, re-read and re-commit the slab
// (duplicates in the child on every try), or, after a torn write, replay
// from the attach point.
//
// The durable offset never passes the parent's flushed high watermark:
// records above it were committed lazily, and after a power cut their
// ingress WAL commits them again; a cursor file past them could skip
// them. So the parent is flushed first, and if that fails the offset is
// clamped to what is flushed: a power cut may then copy records again,
// never skip them. (A closed parent log flushed everything.)
func (e *Engine) advance(ctx context.Context, c *cursor, cf *CursorFile, next uint64) error {
	l := e.logs.Peek(c.key.parent, c.key.partition)
	if l != nil && next > l.Flushed() {
		if err := l.Flush(); err != nil {
			next = min(next, l.Flushed())
		}
	}
	c.checks.beforeAdvance(c.key, next, l)
	backoff := e.cfg.Backoff
	for failures := 0; ; failures++ {
		err := cf.Advance(c.link.epoch, next)
		switch {
		case err == nil:
			c.checks.advanced(next)
			if failures > 0 {
				e.cfg.Logger.Info("fan-out cursor file written again", "parent", c.key.parent, "child", c.key.child,
					"partition", c.key.partition, "next_offset", next, "failures", failures)
			}
			return nil
		case errors.Is(err, ErrCursorEpoch), errors.Is(err, os.ErrClosed):
			return err // not the disk: a retry would fail the same way
		}
		e.m.Errors.WithLabelValues("fanout", "cursor_file").Inc()
		if failures == 0 || backoff >= advanceBackoffCap*e.cfg.Backoff {
			e.cfg.Logger.Warn("fan-out cursor file cannot be written; the cursor keeps its last durable position and retries "+
				"(free space on the data directory's disk, or check the disk)", "parent", c.key.parent, "child", c.key.child,
				"partition", c.key.partition, "next_offset", next, "failures", failures+1, "err", err)
		}
		if !e.sleep(ctx, backoff) {
			return ctx.Err()
		}
		backoff = min(backoff*2, advanceBackoffCap*e.cfg.Backoff)
	}
}

// advanceBackoffCap bounds advance's backoff: 30 × Config.Backoff (30 s).
const advanceBackoffCap = 30

// startPosition resumes from a cursor file of this link's epoch, or anchors
// at the attach point (rule: start at the attach point) — which overwrites
// whatever file is there, so it needs the leader to confirm the epoch is
// current (rule: anchor on the leader's word).
func (e *Engine) startPosition(ctx context.Context, c *cursor, path string) (uint64, error) {
	st, exists, err := readCursorFile(e.cfg.FS, path)
	if err == nil && exists && st.Epoch == c.link.epoch {
		if st.Legacy { // migrate the older variable-length form (same value: not an anchor)
			if err := WriteCursorFileAtomic(e.cfg.FS, path, st.Epoch, st.NextOffset); err != nil {
				return 0, err
			}
		}
		return st.NextOffset, nil
	}
	if err != nil && !errors.Is(err, ErrCursorCorrupt) {
		return 0, err
	}
	start, err := e.attachPoint(c)
	if err != nil {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	childExists, current, err := e.meta.ConfirmTopic(cctx, c.key.child, c.link.epoch)
	if err != nil || !childExists || !current {
		return 0, fmt.Errorf("%w (child %q epoch %s: exists=%v current=%v err=%v)", errDeferred, c.key.child, c.link.epoch, childExists, current, err)
	}
	if err := vfs.MkdirAllDurable(e.cfg.FS, filepath.Dir(path), 0o755); err != nil { // a parent partition never written yet
		return 0, err
	}
	if err := WriteCursorFileAtomic(e.cfg.FS, path, c.link.epoch, start); err != nil {
		return 0, err
	}
	e.cfg.Logger.Info("fan-out cursor anchored", "parent", c.key.parent, "child", c.key.child,
		"partition", c.key.partition, "epoch", c.link.epoch, "offset", start)
	return start, nil
}

// attachPoint is where a cursor with no file for its epoch starts (rule:
// start at the attach point): the recorded offset for a partition the
// attach saw, 0 for one added after it, and — for a record from before
// attach points existed — the live tail.
func (e *Engine) attachPoint(c *cursor) (uint64, error) {
	offs := c.link.attachOffsets
	switch {
	case len(offs) > 0 && c.key.partition < len(offs):
		return offs[c.key.partition], nil
	case len(offs) > 0:
		return 0, nil
	}
	l, err := e.logs.Get(c.key.parent, c.key.partition)
	if err != nil {
		return 0, err
	}
	return l.HWM(), nil
}
