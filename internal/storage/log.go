package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/journal"
	"github.com/narad-io/narad/internal/notify"
	"github.com/narad-io/narad/internal/vfs"
)

// Options configure a Log. The zero value is usable.
type Options struct {
	// SegmentBytes caps a segment file; an append that would pass it seals
	// the segment and rolls to a new one. Default 64 MiB.
	SegmentBytes int64
	// Codec and Level choose frame compression for new frames. Frames of
	// both codecs can sit in one segment; readers follow each frame's flags.
	Codec Codec
	Level string
	// Now is the wall clock used to stamp commit times. Default time.Now.
	Now func() time.Time
	// HWMPersistInterval bounds how stale the hwm file may be. Default 1 s.
	HWMPersistInterval time.Duration
	// SkipCorrupt lets Open proceed past corruption in the middle of the
	// active segment (operator opt-in); readers then skip the bad range.
	SkipCorrupt bool
	// Logger receives what an operator must know: recovery shortfalls,
	// skipped ranges, fences. Default: discard.
	Logger *slog.Logger
	// Hooks receive measurements; nil fields are skipped.
	Hooks Hooks
	// FS is the filesystem every file call goes through; nil is the real
	// disk (vfs.Default). Tests put an errorfs here.
	FS vfs.FS
	// Held opens the log of a replicated partition (held.go): commits are
	// durable on return but readers see them only once Release says a
	// quorum holds them; Append, TruncateTo, ReadTo and the replica.state
	// file serve replication. Lazy commits are never lazy on a held log.
	Held bool
	// Journal, on a held log, makes its writes durable instead of an
	// fdatasync of their segment (journal.go): one fdatasync of the
	// node's journal for the writes of every copy. nil: each commit and
	// Append fdatasyncs its segment.
	Journal *journal.Journal
}

// Hooks let the caller observe the log without this package knowing any
// metrics library.
type Hooks struct {
	// Flush times the write of a commit's frames into the segment file,
	// Fsync the fdatasync that follows it.
	Flush      func(time.Duration)
	Fsync      func(time.Duration)
	HWMPersist func(time.Duration)
	// CorruptSkipped counts unreadable records readers stepped over, once
	// per record for the life of the Log.
	CorruptSkipped func(n uint64)
	// Fenced is called when an fdatasync or read-back failure fences the
	// log (fence.go).
	Fenced func()
	// HWMPersistFailed is called when the hwm file could not be written.
	HWMPersistFailed func()
	// Shortfall is called when recovery finds fewer records than the
	// directory says were published (open.go).
	Shortfall func()
	// ReadFailed is called for each read that failed with an I/O error
	// (read.go): the reader retries, nothing is skipped.
	ReadFailed func()
}

func (o *Options) withDefaults() {
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 64 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HWMPersistInterval <= 0 {
		o.HWMPersistInterval = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

var (
	// ErrClosed is returned by every operation on a closed log.
	ErrClosed = errors.New("partition log is closed")
	// ErrEmptyBatch refuses a commit of zero records.
	ErrEmptyBatch = errors.New("empty batch")
)

// Log is one partition's log. Commit, Read and the accessors are safe for
// concurrent use.
type Log struct {
	dir  string
	opts Options
	fs   vfs.FS

	// commitMu is the produce lock: it serialises commits, rolls,
	// retention, fence recovery and hwm writes, and guards enc, floor,
	// failed and hwmFailing.
	commitMu   sync.Mutex
	enc        *frameEncoder
	verify     []byte
	group      []byte // one group commit's frames, written with one write
	floor      int64  // newest commit time committed; stamps are raised to it
	failed     error  // the fence (fence.go): a sync or verify failure, the file state is unknown
	hwmFailing bool   // the last hwm write failed (logged once per failing spell)
	fenced     atomic.Bool
	// applied is the highest WAL seq the log holds per origin (Source):
	// what an idempotent re-dispatch skips. Recovered by Open.
	applied map[uint64]uint64
	// flushed is the flushed high watermark: every record below it is on
	// disk (fdatasynced). Lazy commits publish past it; Flush, a
	// synchronous commit, a roll or Close bring it up to the HWM.
	// flushedPos is the active segment's byte size it stands for.
	flushed    atomic.Uint64
	flushedPos int64
	// lostLazy: an fdatasync failed while published lazy frames were not
	// yet on disk. The kernel may have dropped them, so the log stays
	// fenced until it is reopened (a restart), whose recovery cuts back to
	// what is on disk and lets the WAL re-dispatch the rest.
	lostLazy bool
	// jnl is Options.Journal on a held log, else nil; fileDirty: the
	// active segment holds journaled frames not yet fdatasynced in it
	// (journal.go). Guarded by commitMu.
	jnl       *journal.Journal
	fileDirty bool

	// queue holds commits waiting for the group-commit leader (commit.go).
	gmu     sync.Mutex
	queue   []*commitReq
	leading bool

	// mu guards what readers see: segs, end, hwm, oldest, closed.
	mu   sync.RWMutex
	segs []*segment // ascending; the last is active
	// end is one past the last record verified here (the active
	// segment's end); hwm is what readers see. On a log that is not held
	// they are equal; on a held log hwm moves only by Release, never past
	// end (held.go).
	end    uint64
	hwm    uint64
	oldest uint64
	closed bool
	// mustReopen: a truncation failed part way (truncate.go); the files
	// are consistent for a reopen but not known to match segs, so Recover
	// refuses and the owner reopens the log.
	mustReopen bool

	// openHWM is the high watermark recovery ended at: every record below
	// it was published before this Log existed. It never changes.
	openHWM uint64
	log     *slog.Logger
	skips   skipCounter // read.go: what readers skipped, counted once

	cache  frameCache
	notify *notify.Broadcast
	// endNote wakes waiters for End to move (a leader's fetch long-poll).
	// On a log that is not held it is notify itself.
	endNote *notify.Broadcast
	// stateMu serialises replica.state writes and guards state.
	stateMu sync.Mutex
	state   ReplicaState

	hwmw      *hwmWriter
	persisted atomic.Uint64
	corrupt   atomic.Uint64
	reads     atomic.Uint64
	// readFailLogged is when a failed read was last logged (UnixNano).
	readFailLogged atomic.Int64

	stop chan struct{}
	done chan struct{}
}

// persistLoop rewrites the hwm file when the HWM moved, at a bounded
// cadence, so a crashed log's directory is never more than one interval
// behind for describing.
func (l *Log) persistLoop() {
	defer close(l.done)
	t := time.NewTicker(l.opts.HWMPersistInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.persistHWM()
		}
	}
}

func (l *Log) persistHWM() {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.persistHWMLocked()
}

// PersistHWM makes sure the hwm file says at least atLeast, writing it now
// if it is behind. The broker calls it before it persists a consumer
// frontier, so that the hwm file is never behind a durable frontier: a
// frontier above the recorded high watermark can then only be damage or a
// mistake (package hosted clamps it), never a stale hwm file. atLeast
// must not pass Flushed (the broker clamps the frontier to it first): the
// hwm file records only flushed records.
func (l *Log) PersistHWM(atLeast uint64) error {
	if l.persisted.Load() >= atLeast {
		return nil
	}
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if err := l.persistHWMLocked(); err != nil {
		return err
	}
	if p := l.persisted.Load(); p < atLeast {
		return fmt.Errorf("partition log %s: high watermark %d is below %d", l.dir, p, atLeast)
	}
	return nil
}

// persistHWMLocked writes the hwm file if the HWM moved. The file is
// rewritten whole and in place each time, so a failed write or fdatasync
// leaves nothing to fence: the next write replaces all of it and syncs
// again. Meanwhile the file is only behind, which is safe (it is a lower
// bound and a description), and the failure is reported once per spell.
// Called under commitMu.
func (l *Log) persistHWMLocked() error {
	l.mu.RLock()
	hwm, closed := l.end, l.closed
	l.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	// Only the flushed high watermark is ever recorded: recovery treats the
	// file's claim as on disk, and records past it may still be only in
	// the page cache (lazy commits). On a held log that is its durable
	// end, released or not: the claim says what the disk holds.
	hwm = min(hwm, l.flushed.Load())
	if hwm == l.persisted.Load() {
		return nil
	}
	t0 := time.Now()
	if err := l.hwmw.write(HWMFile{HWM: hwm}); err != nil {
		if h := l.opts.Hooks.HWMPersistFailed; h != nil {
			h()
		}
		if !l.hwmFailing {
			l.log.Error("hwm file not written; the partition keeps serving and the write is retried every interval",
				"file", l.hwmw.f.Name(), "err", err)
		}
		l.hwmFailing = true
		return fmt.Errorf("partition log %s: hwm file: %w", l.dir, err)
	}
	if l.hwmFailing {
		l.log.Info("hwm file written again", "file", l.hwmw.f.Name(), "hwm", hwm)
	}
	l.hwmFailing = false
	l.persisted.Store(hwm)
	if h := l.opts.Hooks.HWMPersist; h != nil {
		h(time.Since(t0))
	}
	return nil
}

// Close writes the hwm file with its boundary and closes the files. After
// Close the directory describes itself exactly (Describe).
func (l *Log) Close() error {
	l.commitMu.Lock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.commitMu.Unlock()
		return nil
	}
	active := l.segs[len(l.segs)-1]
	l.mu.Unlock()
	// Lazy frames go to disk before the log goes away: whoever committed
	// them releases their WAL copy once this log is not open (broker
	// Flush), and the boundary below must describe the disk.
	ferr := l.syncActiveLocked(active)
	if ferr == nil {
		ferr = l.forgetJournalLocked()
	}
	l.mu.Lock()
	l.closed = true
	h := HWMFile{HWM: l.flushed.Load(), Boundary: l.failed == nil, Segment: active.base, Position: active.size}
	l.mu.Unlock()
	if l.failed != nil {
		// Fenced and never recovered: drop what was not verified, so that
		// the next Open cannot publish it (best effort; no boundary either
		// way, so the next Open scans).
		cutTail(active, active.size)
	}
	l.commitMu.Unlock()
	close(l.stop)
	<-l.done
	err := l.hwmw.write(h)
	if ferr != nil {
		err = ferr
	}
	if cerr := l.hwmw.close(); err == nil {
		err = cerr
	}
	if cerr := l.closeFiles(); err == nil {
		err = cerr
	}
	l.notify.Fire() // parked readers wake and see ErrClosed
	if l.endNote != l.notify {
		l.endNote.Fire()
	}
	return err
}

func (l *Log) closeFiles() error {
	var first error
	for _, s := range l.segs {
		if err := s.f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Dir is the partition directory.
func (l *Log) Dir() string { return l.dir }

// Published names the active segment's file and how many of its bytes hold
// verified, published frames that are on disk. A copy of the log (a
// partition move) must not take bytes past it: they may be a write in
// progress, or a failed one the log truncates and writes again. Lazy
// frames are flushed first, so a copy taken after a freeze holds every
// published record (the WAL that held them may be released meanwhile);
// if that flush fails, only the flushed bytes are named.
func (l *Log) Published() (file string, size int64) {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.mu.RLock()
	a, closed := l.segs[len(l.segs)-1], l.closed
	l.mu.RUnlock()
	if !closed {
		l.syncActiveLocked(a) // a failure fences the log and is logged there
	}
	return filepath.Base(a.path), l.flushedPos
}

// Flusher is what a lazy commit leaves its caller to call (Log.Flush),
// named here so the commit seams can pass it without knowing *Log.
type Flusher interface{ Flush() error }

// Flushed is the flushed high watermark: every record below it is on disk.
// Records between it and HWM were committed lazily (CommitFrom) and are
// readable, but only their ingress WAL holds them durably until Flush.
// On a held log records past HWM are on disk too, but Flushed still never
// passes HWM: it bounds what a reader may have been handed.
func (l *Log) Flushed() uint64 {
	f := l.flushed.Load()
	if l.opts.Held {
		return min(f, l.HWM())
	}
	return f
}

// Flush makes every lazily committed record durable: one fdatasync of the
// active segment (a roll syncs the segment it seals, so lazy frames are
// only ever in the active one), then the hwm file; nothing when no lazy
// frame is unflushed. On a closed log it answers for Close's flush: nil
// when Close made everything durable, an error when it could not. After it returns nil,
// Flushed is at least the HWM it saw. A failed fdatasync fences the log for
// good (lostLazy): the lazy frames may be gone from the disk while readers
// saw them, and only a reopen, which recovers what the disk holds and lets
// the WAL re-dispatch the rest in order, can tell.
func (l *Log) Flush() error {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.mu.RLock()
	a, closed := l.segs[len(l.segs)-1], l.closed
	l.mu.RUnlock()
	if closed {
		// Close flushed (or failed to, and said so): a closed log answers
		// for its lazy frames for as long as someone holds it.
		if f, h := l.flushed.Load(), l.HWM(); f < h {
			return fmt.Errorf("partition log %s closed with records %d..%d not on disk: %w", l.dir, f, h, ErrClosed)
		}
		return nil
	}
	if err := l.syncActiveLocked(a); err != nil {
		return err
	}
	return l.persistHWMLocked()
}

// syncActiveLocked fdatasyncs the active segment if it holds lazy frames
// not yet on disk. Called under commitMu.
func (l *Log) syncActiveLocked(a *segment) error {
	l.mu.RLock()
	hwm := l.end
	l.mu.RUnlock()
	if l.flushed.Load() >= hwm && !l.fileDirty {
		return nil
	}
	if l.failed != nil && l.lostLazy {
		return l.failed
	}
	t0 := time.Now()
	if err := a.f.Datasync(); err != nil {
		return l.fence(a, a.size, "fdatasync of lazy frames", err)
	}
	if h := l.opts.Hooks.Fsync; h != nil {
		h(time.Since(t0))
	}
	l.flushedPos = a.size
	l.flushed.Store(hwm)
	l.fileDirty = false
	return nil
}

// HWM is the exclusive upper bound of committed records: what readers
// see. On a held log it is what Release allowed (held.go).
func (l *Log) HWM() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.hwm
}

// Oldest is the offset of the oldest retained record (== HWM when empty).
func (l *Log) Oldest() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.oldest
}

// Notify returns a channel closed at the next commit or Wake (on a held
// log: at the next Release that moves the HWM, or Wake). Take it
// before re-checking a condition, then block on it.
func (l *Log) Notify() <-chan struct{} { return l.notify.Wait() }

// Wake wakes every Notify waiter without a commit. (The lease table does
// no I/O and never calls it; the broker wakes its consumers itself.)
func (l *Log) Wake() { l.notify.Fire() }

// Reads counts Read calls: how tests prove an idle delay cursor costs
// O(1) however long its backlog.
func (l *Log) Reads() uint64 { return l.reads.Load() }

// OpenHWM is the high watermark the log recovered to when it was opened:
// every record below it was published before this Log existed.
func (l *Log) OpenHWM() uint64 { return l.openHWM }

// CorruptSkipped counts records readers skipped as unreadable.
func (l *Log) CorruptSkipped() uint64 { return l.corrupt.Load() }
