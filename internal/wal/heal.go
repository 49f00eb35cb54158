package wal

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// How the WAL lives through I/O failures without a restart.
//
// A failed batch fails its group: the appenders of that batch and of the
// batch staged behind it get the error, the seqs they were given are handed
// out again, and nothing they wrote is ever made visible. What happens to
// the WAL depends on what failed:
//
//   - A write that failed for lack of space (ENOSPC, EDQUOT) leaves the file
//     in a known state: every byte below the durable end was fdatasynced
//     before, and the bytes past it belong to the failed group. The active
//     segment is sealed at its durable end (truncated and fsynced from a
//     fresh descriptor) and the next batch starts a fresh segment. Appends
//     keep being tried; they succeed as soon as space exists again.
//   - A failed fdatasync (or any other write failure) leaves the file's state
//     unknown: the kernel may have dropped the dirty pages and a later
//     fdatasync on the same descriptor could report success for them
//     (fsyncgate). The WAL is fenced: appends are refused with ErrFenced and
//     Health reports it. Every HealInterval the syncer re-reads the active
//     segment from a fresh descriptor up to its durable end, checks every
//     record and seq, cuts off whatever lies past it, fsyncs the file and
//     the directory, and lifts the fence; the next batch starts a fresh
//     segment. If the re-read finds damage below the durable end, acknowledged
//     records are gone: the fence stays (Health says so) until an operator
//     restarts the node, whose recovery refuses to open over the damage.
//   - A segment create that failed made nothing (createSegment removes what
//     it created), so it only fails the group, or, at rotation, leaves the
//     full segment active a little longer; a failed directory fsync fences.
var (
	// ErrNoSpace is matched by append errors caused by a full disk: retry
	// once space is freed.
	ErrNoSpace = errors.New("wal: no space left on the ingress log's disk")
	// ErrFenced is matched by append errors while the WAL is fenced after a
	// failed fdatasync or write, and by Health then.
	ErrFenced = errors.New("wal: fenced after an I/O error")
)

// DefaultHealInterval spaces a fenced WAL's attempts to heal.
const DefaultHealInterval = time.Second

type failOp int

const (
	opWrite failOp = iota
	opSync
	opCreate
)

// ioFailure is a syncer-side failure, tagged with the call that failed.
type ioFailure struct {
	op  failOp
	err error
}

func (e *ioFailure) Error() string { return e.err.Error() }
func (e *ioFailure) Unwrap() error { return e.err }

// appendError is what the appenders of a failed group get: it matches
// ErrFailed, its kind (ErrNoSpace, ErrFenced, or ErrFailed alone) and the
// cause.
type appendError struct {
	kind  error
	cause error
}

func (e *appendError) Error() string   { return fmt.Sprintf("%v: %v", e.kind, e.cause) }
func (e *appendError) Unwrap() []error { return []error{ErrFailed, e.kind, e.cause} }

func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// onFailure decides what a failure does to the WAL (see above) and returns
// the error the failed group gets.
func (w *WAL) onFailure(err error) error {
	var f *ioFailure
	if !errors.As(err, &f) {
		f = &ioFailure{op: opWrite, err: err}
	}
	kind := ErrFailed
	if isNoSpace(err) {
		kind = ErrNoSpace
	}
	switch {
	case f.op == opCreate && !errors.Is(err, errDirSync):
		// Nothing was created: stay sealed, the next batch tries again.
		w.logger().Warn("ingress WAL: cannot start a new segment; appends fail until it can", "err", err)
	case f.op == opWrite && kind == ErrNoSpace:
		if serr := w.seal(false); serr != nil {
			w.fence(fmt.Errorf("%w; sealing the active segment after it failed: %w", err, serr))
		} else {
			w.logger().Error("ingress WAL: disk full; appends fail until space is freed, acknowledged records are safe",
				"segment", w.activeSeg.path, "err", err)
		}
	default:
		w.fence(err)
		kind = ErrFenced
	}
	return &appendError{kind: kind, cause: err}
}

// failGroup fails b and the batch staged behind it (whose seqs follow b's
// and so cannot be written without b), and hands their seqs out again.
func (w *WAL) failGroup(b *batch, err error) {
	w.mu.Lock()
	w.nextSeq = b.first
	behind := w.cur
	if behind.appends > 0 {
		w.cur = &batch{done: make(chan struct{})}
		if behind.taken != nil {
			close(behind.taken)
		}
	} else {
		behind = nil
	}
	w.failures.Add(1)
	w.mu.Unlock()
	b.err = err
	close(b.done)
	if behind != nil {
		behind.err = err
		close(behind.done)
	}
}

// fence refuses appends until heal succeeds.
func (w *WAL) fence(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fenced != nil {
		return
	}
	w.fenced = &appendError{kind: ErrFenced, cause: err}
	w.nextHeal = time.Now().Add(w.opts.HealInterval)
	w.fences.Add(1)
	w.logger().Error("ingress WAL fenced: its active segment's state on disk is unknown after an I/O error; appends are refused "+
		"until it is re-read from disk", "segment", w.activeSeg.path, "retry_every", w.opts.HealInterval, "err", err)
}

// healIfDue tries, on the syncer, to lift a fence that is due.
func (w *WAL) healIfDue() {
	w.mu.Lock()
	due := w.fenced != nil && !w.broken && !time.Now().Before(w.nextHeal)
	w.mu.Unlock()
	if !due {
		return
	}
	err := w.heal()
	w.mu.Lock()
	defer w.mu.Unlock()
	var ce *CorruptError
	switch {
	case err == nil:
		w.fenced = nil
		w.heals.Add(1)
		w.logger().Warn("ingress WAL healed: the active segment was re-read and sealed at its last durable record; appends resume in a new segment",
			"segment", w.activeSeg.path, "last_seq", w.activeSeg.last)
	case errors.As(err, &ce):
		w.broken = true
		w.fenced = &appendError{kind: ErrFenced, cause: fmt.Errorf("acknowledged records are damaged on disk (%w); "+
			"restart the node: recovery names the damage and refuses to open over it", err)}
		w.logger().Error("ingress WAL: acknowledged records are damaged; it stays fenced until a restart", "err", err)
	default:
		w.nextHeal = time.Now().Add(w.opts.HealInterval)
		w.logger().Warn("ingress WAL: heal failed; retrying", "retry_in", w.opts.HealInterval, "err", err)
	}
}

// heal re-opens the WAL's tail from what is verifiably on disk: the active
// segment re-read and sealed at its durable end, no stray file where the
// next segment goes, the directory fsynced.
func (w *WAL) heal() error {
	if err := w.seal(true); err != nil {
		return err
	}
	// Only when sealed: an empty segment stays active, and its own name is
	// the one after its last seq.
	stray := filepath.Join(w.dir, segmentName(w.activeSeg.last+1))
	if w.needFresh {
		if err := w.fs.Remove(stray); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("wal: remove %s left by a failed segment create: %w", stray, err)
		}
	}
	return syncDir(w.fs, w.dir)
}

// seal cuts the active segment at its durable end and makes that length
// durable. After a fence (verify) it first re-reads every record below the
// durable end, and it works on a fresh descriptor: an fdatasync error is
// reported once per descriptor, so the old one cannot be trusted to say
// whether a later sync worked. After a full disk the active descriptor is
// sound (the write failed before anything was queued) and is used as is.
//
// A non-empty segment is then closed and the next batch starts a fresh one
// (needFresh); an empty one stays active, as a fresh segment would take
// its name.
func (w *WAL) seal(verify bool) error {
	seg, end := w.activeSeg, w.activeOff
	f := w.active
	if verify || f == nil {
		if err := w.verify(seg, end); err != nil {
			return err
		}
		var err error
		if f, err = w.fs.OpenFile(seg.path, os.O_RDWR, 0); err != nil {
			return fmt.Errorf("wal: reopen %s to seal it: %w", seg.path, err)
		}
		if w.active != nil {
			_ = w.active.Close() // its data is judged by what was just re-read and synced
		}
		w.active = nil
	}
	err := f.Truncate(end)
	if err != nil {
		err = fmt.Errorf("wal: cut %s at its durable end, byte %d: %w", seg.path, end, err)
	} else if err = f.Sync(); err != nil {
		err = fmt.Errorf("wal: fsync %s after cutting it at byte %d: %w", seg.path, end, err)
	}
	if err != nil {
		if f != w.active {
			f.Close()
		}
		return err
	}
	if end == 0 {
		w.active, w.needFresh = f, false
		return nil
	}
	w.active, w.needFresh = nil, true
	return f.Close()
}

// verify re-reads seg from a fresh descriptor up to end and checks that it
// holds exactly the records first..last in order, as recovery would.
func (w *WAL) verify(seg *segment, end int64) error {
	f, err := w.fs.OpenFile(seg.path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("wal: reopen %s to re-read it: %w", seg.path, err)
	}
	defer f.Close()
	var sc scanner
	again := newSegment(w.dir, seg.first)
	if err := scanTo(&sc, f, again, end, false); err != nil {
		return err
	}
	if again.last != seg.last {
		return &CorruptError{Path: seg.path, Offset: again.durable,
			Reason: fmt.Errorf("ends at seq %d, acknowledged up to %d", again.last, seg.last)}
	}
	return nil
}

// startFresh creates the segment the next batch goes into after a seal.
func (w *WAL) startFresh(first uint64) error {
	f, seg, err := createSegment(w.fs, w.dir, first)
	if err != nil {
		return &ioFailure{op: opCreate, err: err}
	}
	w.mu.Lock()
	w.segs = append(w.segs, seg)
	w.unlockChecked("start a fresh segment", w.segmentChecks())
	w.active, w.activeSeg, w.activeOff, w.needFresh = f, seg, 0, false
	return nil
}

// Health is nil while the WAL takes appends, else why it does not: it
// matches ErrFenced while fenced (healing, or damaged until a restart).
// A full disk is not reported here: every append still tries.
func (w *WAL) Health() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.fenced
}

// Failures counts failed groups, Fences the times the WAL was fenced and
// Heals the fences lifted, for metrics and tests.
func (w *WAL) Failures() uint64 { return w.failures.Load() }
func (w *WAL) Fences() uint64   { return w.fences.Load() }
func (w *WAL) Heals() uint64    { return w.heals.Load() }

var discard = slog.New(slog.DiscardHandler)

func (w *WAL) logger() *slog.Logger {
	if w.opts.Logger != nil {
		return w.opts.Logger
	}
	return discard
}
