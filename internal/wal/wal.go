package wal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/vfs"
)

var (
	// ErrClosed is returned by calls on a closed WAL.
	ErrClosed = errors.New("wal: closed")
	// ErrFailed is matched by every error an append gets because of an I/O
	// failure; ErrNoSpace or ErrFenced says which kind (heal.go).
	ErrFailed = errors.New("wal: append failed on an I/O error")
)

// maxStagedBytes bounds the staging buffer. Appends beyond it wait, before
// staging (so they can still honour their context), until the syncer takes
// the buffer: memory stays bounded when the disk is slower than producers.
const maxStagedBytes = 64 << 20

// maxSpareBytes is the largest staging buffer kept for reuse; a burst that
// grew it beyond this does not pin the memory afterwards.
const maxSpareBytes = 4 << 20

// WAL is the ingress write-ahead log. See the package documentation.
type WAL struct {
	dir      string
	identity uint64 // identity.go
	fs       vfs.FS // every file call goes through it
	opts     Options
	hooks    testHooks
	lock     io.Closer // holds the flock that keeps a second process out

	// mu guards staging and the shared bookkeeping. It is held only for
	// memory operations, never across I/O, so appenders never wait on the
	// disk to stage.
	mu         sync.Mutex
	cur        *batch // the batch appenders are staging into
	nextSeq    uint64 // seq for the next staged record
	closed     bool
	fenced     error         // set while appends are refused (heal.go); matches ErrFenced
	broken     bool          // the fence stays: acknowledged records are damaged
	nextHeal   time.Time     // when a fenced WAL next tries to heal
	segs       []*segment    // retained segments, oldest first; the last is active
	notify     chan struct{} // closed and replaced after each durable batch
	stageLimit int
	gatherAt   int // nonzero while the syncer gathers: the staged appends that wake it (gather.go)

	lastSeq    atomic.Uint64 // newest durable seq
	checkpoint atomic.Uint64
	size       atomic.Int64  // durable bytes across retained segments
	syncs      atomic.Uint64 // batches made durable (one fdatasync each), for Stats
	records    atomic.Uint64 // records made durable, for Stats
	appends    atomic.Uint64 // Append calls made durable, for Stats
	failures   atomic.Uint64 // failed groups
	fences     atomic.Uint64
	heals      atomic.Uint64
	lingers    atomic.Uint64 // times the syncer waited for a group to gather, for tests

	wake       chan struct{} // capacity 1: "the staging buffer became non-empty"
	quit       chan struct{}
	syncerDone chan struct{}
	rotateReq  chan chan error

	gatherTimer *time.Timer // owned by the syncer (gather.go)

	// Owned by the syncer goroutine: it is the only writer of segment files.
	active    vfs.File // nil while sealed (needFresh) or after Close
	activeSeg *segment
	activeOff int64
	spare     []byte
	// needFresh: the active segment was sealed after a failure; the next
	// batch first creates a new segment at the next seq (heal.go).
	needFresh bool

	readMu sync.Mutex // serialises Read; guards rd
	rd     cursor

	ckMu sync.Mutex // serialises SetCheckpoint and Close
}

// batch is one group commit: the encoded records of every Append staged
// between two takes by the syncer.
type batch struct {
	buf     []byte
	first   uint64
	last    uint64
	appends int
	behind  int           // appends staged behind this batch when it was published (gather.go)
	done    chan struct{} // closed when err is final
	taken   chan struct{} // lazily made; closed when the syncer takes the batch
	err     error
}

// testHooks let tests stand between the syncer and the disk. They are set
// before the syncer starts and never change afterwards.
type testHooks struct {
	beforeWrite  func() error // called by the syncer before writing each batch
	afterRelease func()       // called by the syncer right after it released a durable batch's appenders
	dropWakes    bool         // never signal wake, leaving progress to the backstop
}

// Append stages recs, assigns them contiguous seqs (written into recs[i].Seq)
// and returns once all of them are durable, or with the error that kept them
// from becoming so. The seqs are meaningful only when Append returns nil.
//
// ctx is honoured only until the records are staged. After that Append waits
// for the real sync result: reporting failure for records that did become
// durable would make a well-behaved client produce them twice. A record over
// MaxRecordBytes fails the whole call with ErrRecordTooLarge before anything
// is staged; an empty recs is a no-op.
func (w *WAL) Append(ctx context.Context, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	total := 0
	for i := range recs {
		n, err := encodedSize(&recs[i])
		if err != nil {
			return fmt.Errorf("wal: append record %d of %d (topic %q): %w", i, len(recs), recs[i].Topic, err)
		}
		total += n
	}

	w.mu.Lock()
	for {
		if w.closed {
			w.mu.Unlock()
			return ErrClosed
		}
		if w.fenced != nil {
			err := w.fenced
			w.mu.Unlock()
			return err
		}
		if w.cur.appends == 0 || len(w.cur.buf)+total <= w.stageLimit {
			break
		}
		if w.cur.taken == nil {
			w.cur.taken = make(chan struct{})
		}
		taken := w.cur.taken
		gathering := w.gatherAt != 0
		w.mu.Unlock()
		if gathering { // the syncer must stop waiting for more: nothing more fits
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
		select {
		case <-taken:
		case <-ctx.Done():
			return ctx.Err()
		}
		w.mu.Lock()
	}
	b := w.cur
	wasEmpty := b.appends == 0
	if wasEmpty {
		b.first = w.nextSeq
	}
	seq := w.nextSeq
	for i := range recs {
		r := &recs[i]
		b.buf = appendRecord(b.buf, r, seq, int(frameSize(r))) // checked by encodedSize above
		r.Seq = seq
		seq++
	}
	w.nextSeq = seq
	b.last = seq - 1
	b.appends++
	whole := b.appends == w.gatherAt
	w.mu.Unlock()

	// Only the append that made the buffer non-empty needs to wake the
	// syncer (a busy syncer takes the buffer again as soon as it finishes),
	// and the one that completed the group a gathering syncer waits for.
	if (wasEmpty || whole) && !w.hooks.dropWakes {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	<-b.done
	return b.err
}

// LastSeq returns the newest durable seq (0 if none was ever written).
func (w *WAL) LastSeq() uint64 { return w.lastSeq.Load() }

// Checkpoint returns the first seq not known committed; every record below
// it is committed to its partition. It is 1 for a new WAL.
func (w *WAL) Checkpoint() uint64 { return w.checkpoint.Load() }

// SizeBytes returns the durable bytes held by retained segments.
func (w *WAL) SizeBytes() int64 { return w.size.Load() }

// Notify returns a channel that is closed at the next durable append (or at
// Close). Take it before calling Read so an append landing in between is not
// missed: ch := w.Notify(); recs, _ := w.Read(...); if len(recs) == 0 { <-ch }.
func (w *WAL) Notify() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notify
}

func (w *WAL) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// syncLoop is the single syncer: it takes whatever is staged, writes it with
// one write and one fdatasync, and wakes exactly the appenders of that batch.
// While it is in the syscall the next batch accumulates, so under load one
// sync serves every appender that arrived during the previous one.
//
// It also waits on a backstop timer, so a lost wake-up costs at most
// Options.SyncBackstop instead of leaving appenders blocked forever.
func (w *WAL) syncLoop() {
	defer close(w.syncerDone)
	backstop := time.NewTimer(w.opts.SyncBackstop)
	defer backstop.Stop()
	expect := 0 // appenders the next batch should carry (gather.go)
	var released time.Time
	for {
		select {
		case req := <-w.rotateReq:
			req <- w.rotateIfDispatched()
		default:
		}
		w.healIfDue()
		if expect > 1 {
			w.gather(expect, w.opts.GatherWait-time.Since(released))
		}
		b, closing := w.take()
		if b != nil {
			if w.commit(b) {
				expect, released = b.appends+b.behind, time.Now()
			} else {
				expect = 0
			}
			continue
		}
		if closing {
			return
		}
		backstop.Reset(w.opts.SyncBackstop)
		select {
		case <-w.wake:
		case <-backstop.C:
		case <-w.quit:
		case req := <-w.rotateReq:
			req <- w.rotateIfDispatched()
		}
	}
}

// take swaps out the staged batch. It returns nil if nothing is staged, and
// closing once Close has been called (no more staging can happen then).
func (w *WAL) take() (b *batch, closing bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur.appends == 0 {
		return nil, w.closed
	}
	b = w.cur
	w.cur = &batch{buf: w.spare[:0], done: make(chan struct{})}
	w.spare = nil
	if b.taken != nil {
		close(b.taken)
	}
	return b, w.closed
}

// commit makes b durable (or fails it) and releases its appenders. It
// reports whether b became durable.
func (w *WAL) commit(b *batch) bool {
	w.mu.Lock()
	fenced := w.fenced
	w.mu.Unlock()
	if fenced != nil {
		w.failGroup(b, fenced) // staged just before the fence went up
		return false
	}
	var err error
	if w.needFresh {
		err = w.startFresh(b.first)
	}
	if err == nil {
		err = w.writeAndSync(b)
	}
	if err != nil {
		w.failGroup(b, w.onFailure(err))
		return false
	}
	w.publish(b)
	b.err = nil
	close(b.done)
	if h := w.hooks.afterRelease; h != nil {
		h()
	}

	if cap(b.buf) <= maxSpareBytes {
		w.spare = b.buf[:0]
	}
	// Rotate after releasing the appenders: their records are durable in the
	// old segment, so they need not wait for a file create and dir fsync.
	if w.activeOff >= w.opts.SegmentBytes {
		w.rotateOrKeep()
	}
	return true
}

func (w *WAL) writeAndSync(b *batch) error {
	if h := w.hooks.beforeWrite; h != nil {
		if err := h(); err != nil {
			return &ioFailure{op: opWrite, err: err}
		}
	}
	if _, err := w.active.WriteAt(b.buf, w.activeOff); err != nil {
		return &ioFailure{op: opWrite, err: fmt.Errorf("wal: write seqs %d-%d (%d bytes) to %s at byte %d: %w",
			b.first, b.last, len(b.buf), w.activeSeg.path, w.activeOff, err)}
	}
	if err := w.active.Datasync(); err != nil {
		return &ioFailure{op: opSync, err: fmt.Errorf("wal: fdatasync %s after writing seqs %d-%d: %w",
			w.activeSeg.path, b.first, b.last, err)}
	}
	return nil
}

// publish makes a durable batch visible: to LastSeq, to the reader (segment
// bounds) and to Notify waiters, all in one critical section so a reader
// never sees a seq whose bytes it cannot reach.
func (w *WAL) publish(b *batch) {
	off := w.activeOff
	w.activeOff += int64(len(b.buf))
	w.mu.Lock()
	s := w.activeSeg
	prevLast, segLast, prevDurable := w.lastSeq.Load(), s.last, s.durable
	s.noteBoundary(b.first, off)
	s.durable = w.activeOff
	s.last = b.last
	w.lastSeq.Store(b.last)
	w.size.Add(int64(len(b.buf)))
	// Counted before the batch's own appenders are released, so none of
	// them can be counted again here by staging its next records.
	b.behind = w.cur.appends
	w.syncs.Add(1)
	w.records.Add(b.last - b.first + 1)
	w.appends.Add(uint64(b.appends))
	close(w.notify)
	w.notify = make(chan struct{})
	w.unlockChecked("publish", publishChecks(s, b, prevLast, segLast, prevDurable))
}

// rotate seals the active segment and starts a new one at the next seq.
// Called only by the syncer, between batches.
func (w *WAL) rotate() error {
	next := w.activeSeg.last + 1
	f, seg, err := createSegment(w.fs, w.dir, next)
	if err != nil {
		return err
	}
	old := w.active
	w.mu.Lock()
	w.segs = append(w.segs, seg)
	w.unlockChecked("rotate", w.segmentChecks())
	w.active, w.activeSeg, w.activeOff = f, seg, 0
	// The old file's data was fdatasynced before rotation, so a close error
	// cannot lose acknowledged records and does not fail the WAL.
	_ = old.Close()
	return nil
}

// rotateOrKeep rotates a full active segment. A create that failed left
// nothing behind (createSegment removes what it made), so the active
// segment, whose records are all durable, simply stays active past
// SegmentBytes and the rotation is tried again after the next batch; only
// a failed directory sync, whose outcome is unknown, fences the WAL.
func (w *WAL) rotateOrKeep() {
	if err := w.rotate(); err != nil {
		if errors.Is(err, errDirSync) {
			w.onFailure(&ioFailure{op: opSync, err: err})
			return
		}
		w.logger().Warn("ingress WAL: rotation failed; the active segment stays active and rotation is retried after the next write",
			"segment", w.activeSeg.path, "err", err)
	}
}

// rotateIfDispatched rotates the active segment when every record in it is
// below the checkpoint and it is past RotateDispatchedBytes, so the next
// SetCheckpoint can delete it. It re-checks under the syncer's ownership of
// the file: nothing is mid-write here.
func (w *WAL) rotateIfDispatched() error {
	w.mu.Lock()
	fenced := w.fenced
	w.mu.Unlock()
	if fenced != nil || w.needFresh {
		return nil // the next batch starts a fresh segment anyway
	}
	if w.checkpoint.Load() <= w.activeSeg.last || w.activeOff <= w.opts.RotateDispatchedBytes {
		return nil
	}
	w.rotateOrKeep()
	return nil
}
