package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

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

	// queue holds commits waiting for the group-commit leader (commit.go).
	gmu     sync.Mutex
	queue   []*commitReq
	leading bool

	// mu guards what readers see: segs, hwm, oldest, closed.
	mu     sync.RWMutex
	segs   []*segment // ascending; the last is active
	hwm    uint64
	oldest uint64
	closed bool

	// openHWM is the high watermark recovery ended at: every record below
	// it was published before this Log existed. It never changes.
	openHWM uint64
	log     *slog.Logger
	skips   skipCounter // read.go: what readers skipped, counted once

	cache     frameCache
	notify    *notify.Broadcast
	hwmw      *hwmWriter
	persisted atomic.Uint64
	corrupt   atomic.Uint64
	reads     atomic.Uint64

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
// mistake (broker/queue.go clamps it), never a stale hwm file.
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
	hwm, closed := l.hwm, l.closed
	l.mu.RUnlock()
	if closed {
		return ErrClosed
	}
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
	l.closed = true
	active := l.segs[len(l.segs)-1]
	h := HWMFile{HWM: l.hwm, Boundary: l.failed == nil, Segment: active.base, Position: active.size}
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
	if cerr := l.hwmw.close(); err == nil {
		err = cerr
	}
	if cerr := l.closeFiles(); err == nil {
		err = cerr
	}
	l.notify.Fire() // parked readers wake and see ErrClosed
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
// verified, published frames. A copy of the log (a partition move) must not
// take bytes past it: they may be a write in progress, or a failed one the
// log truncates and writes again.
func (l *Log) Published() (file string, size int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	a := l.segs[len(l.segs)-1]
	return filepath.Base(a.path), a.size
}

// HWM is the exclusive upper bound of committed records.
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

// Notify returns a channel closed at the next commit or Wake. Take it
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
