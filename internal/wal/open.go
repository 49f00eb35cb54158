package wal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/narad-io/narad/internal/vfs"
)

// Options tune a WAL. Zero values select the defaults.
type Options struct {
	// SegmentBytes is the size past which the active segment is rotated
	// after a write. Default 64 MiB.
	SegmentBytes int64
	// RotateDispatchedBytes is the size past which a fully dispatched active
	// segment is rotated by SetCheckpoint so it can be deleted. Default 1 MiB.
	RotateDispatchedBytes int64
	// SyncBackstop bounds how long staged records can wait if a wake-up of
	// the syncer were ever missed. Default 10 ms.
	SyncBackstop time.Duration
	// GatherWait bounds how long the syncer waits for the appenders it
	// expects before taking a batch (gather.go). Default 2 ms.
	GatherWait time.Duration
	// FS is the filesystem every file call goes through (segments,
	// checkpoint, LOCK, recovery, reads); nil is the real disk. Tests put
	// an errorfs here to fail a chosen write, fdatasync or rename.
	FS vfs.FS
	// HealInterval spaces a fenced WAL's attempts to re-open its tail from
	// what is on disk (heal.go). Default 1 s.
	HealInterval time.Duration
	// Logger receives failures, fences and heals; nil discards them.
	Logger *slog.Logger
}

// Defaults applied to zero Options fields.
const (
	DefaultSegmentBytes          = 64 << 20
	DefaultRotateDispatchedBytes = 1 << 20
	DefaultSyncBackstop          = 10 * time.Millisecond
	DefaultGatherWait            = 2 * time.Millisecond
)

func (o Options) withDefaults() (Options, error) {
	if o.SegmentBytes < 0 || o.RotateDispatchedBytes < 0 || o.SyncBackstop < 0 || o.HealInterval < 0 || o.GatherWait < 0 {
		return o, fmt.Errorf("wal: negative option in %+v", o)
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.RotateDispatchedBytes == 0 {
		o.RotateDispatchedBytes = DefaultRotateDispatchedBytes
	}
	if o.SyncBackstop == 0 {
		o.SyncBackstop = DefaultSyncBackstop
	}
	if o.HealInterval == 0 {
		o.HealInterval = DefaultHealInterval
	}
	if o.GatherWait == 0 {
		o.GatherWait = DefaultGatherWait
	}
	return o, nil
}

// lockName is the file whose flock marks the directory as in use. The kernel
// drops the lock when the holder dies, so a crashed node never leaves a stale
// lock behind.
const lockName = "LOCK"

// Open opens (creating if needed) the WAL in dir, recovering it: a torn tail
// of the last segment is truncated, segments wholly below the checkpoint are
// deleted, and any other damage refuses the open with a *CorruptError. The
// records from Checkpoint() to LastSeq() are then available to Read again.
func Open(dir string, opts Options) (*WAL, error) {
	return open(dir, opts, testHooks{})
}

func open(dir string, opts Options, hooks testHooks) (_ *WAL, err error) {
	opts, err = opts.withDefaults()
	if err != nil {
		return nil, err
	}
	fsys := vfs.Or(opts.FS)
	if err := ensureDir(fsys, dir); err != nil {
		return nil, err
	}
	lock, err := lockDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var rec recovered
	defer func() {
		if err != nil {
			if rec.active != nil {
				rec.active.Close()
			}
			lock.Close() // releases the flock
		}
	}()

	if err := fsys.Remove(filepath.Join(dir, checkpointTmpName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("wal: remove stale %s: %w", checkpointTmpName, err)
	}
	ckpt, err := readCheckpoint(fsys, dir)
	if err != nil {
		return nil, err
	}
	id, err := loadIdentity(fsys, dir)
	if err != nil {
		return nil, err
	}
	firsts, err := listSegments(fsys, dir)
	if err != nil {
		return nil, err
	}
	firsts, err = dropBelow(fsys, dir, firsts, ckpt)
	if err != nil {
		return nil, err
	}
	if len(firsts) == 0 {
		// Nothing retained: everything below the checkpoint was committed,
		// so numbering continues from it and never reuses a seq.
		f, _, err := createSegment(fsys, dir, ckpt)
		if err != nil {
			return nil, err
		}
		f.Close()
		firsts = []uint64{ckpt}
	}
	rec, err = recoverSegments(fsys, dir, firsts)
	if err != nil {
		return nil, err
	}
	oldest, active := rec.segs[0], rec.segs[len(rec.segs)-1]
	if oldest.first > ckpt {
		return nil, fmt.Errorf("wal: %w: checkpoint is %d but the oldest segment %s starts at seq %d",
			ErrCorrupt, ckpt, oldest.path, oldest.first)
	}
	if ckpt > active.last+1 {
		return nil, fmt.Errorf("wal: %w: checkpoint %d is beyond the last record %d (in %s)",
			ErrCorrupt, ckpt, active.last, active.path)
	}

	w := &WAL{
		dir:         dir,
		identity:    id,
		fs:          fsys,
		opts:        opts,
		hooks:       hooks,
		lock:        lock,
		cur:         &batch{done: make(chan struct{})},
		nextSeq:     active.last + 1,
		segs:        rec.segs,
		notify:      make(chan struct{}),
		stageLimit:  maxStagedBytes,
		wake:        make(chan struct{}, 1),
		quit:        make(chan struct{}),
		syncerDone:  make(chan struct{}),
		rotateReq:   make(chan chan error),
		gatherTimer: newGatherTimer(),
		active:      rec.active,
		activeSeg:   active,
		activeOff:   active.durable,
	}
	w.lastSeq.Store(active.last)
	w.checkpoint.Store(ckpt)
	w.size.Store(rec.size)
	go w.syncLoop()
	return w, nil
}

// dropBelow deletes segments whose records are all below ckpt, which a crash
// between writing the checkpoint and deleting them can leave behind. The
// last segment is always kept: it is where appends continue.
func dropBelow(fsys vfs.FS, dir string, firsts []uint64, ckpt uint64) ([]uint64, error) {
	n := 0
	for n+1 < len(firsts) && firsts[n+1] <= ckpt {
		path := filepath.Join(dir, segmentName(firsts[n]))
		if err := fsys.Remove(path); err != nil {
			return nil, fmt.Errorf("wal: delete segment %s below checkpoint %d: %w", path, ckpt, err)
		}
		n++
	}
	return firsts[n:], nil
}

func ensureDir(fsys vfs.FS, dir string) error {
	// Every level it creates made durable in its parent.
	if err := vfs.MkdirAllDurable(fsys, dir, 0o755); err != nil {
		return fmt.Errorf("wal: create directory %s: %w", dir, err)
	}
	return nil
}

func lockDir(fsys vfs.FS, dir string) (io.Closer, error) {
	path := filepath.Join(dir, lockName)
	l, err := fsys.Lock(path)
	switch {
	case errors.Is(err, vfs.ErrLocked):
		return nil, fmt.Errorf("wal: %s is in use by another WAL (lock %s held); stop the other process first", dir, path)
	case err != nil:
		return nil, fmt.Errorf("wal: lock %s: %w", path, err)
	}
	return l, nil
}

// Close flushes staged appends (their callers get the real result), stops the
// syncer and releases the directory. Appends, Reads and SetCheckpoints after
// Close return ErrClosed. Close is idempotent.
func (w *WAL) Close() error {
	w.ckMu.Lock()
	defer w.ckMu.Unlock()
	w.readMu.Lock()
	defer w.readMu.Unlock()

	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()

	close(w.quit)
	<-w.syncerDone

	errs := []error{w.rd.drop()}
	if w.active != nil {
		if err := w.active.Close(); err != nil {
			errs = append(errs, fmt.Errorf("wal: close %s: %w", w.activeSeg.path, err))
		}
	}
	if err := w.lock.Close(); err != nil {
		errs = append(errs, fmt.Errorf("wal: release lock in %s: %w", w.dir, err))
	}
	w.mu.Lock()
	close(w.notify) // wake long-polls; their next Read reports ErrClosed
	w.mu.Unlock()
	return errors.Join(errs...)
}
