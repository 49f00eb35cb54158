package storage

import (
	"errors"
	"fmt"
	"os"
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
	// Hooks receive measurements; nil fields are skipped.
	Hooks Hooks
	// FS is the filesystem every file call goes through; nil is the real
	// disk (vfs.Default). Tests put an errorfs here.
	FS vfs.FS
}

// Hooks let the caller observe the log without this package knowing any
// metrics library.
type Hooks struct {
	Fsync          func(time.Duration)
	HWMPersist     func(time.Duration)
	CorruptSkipped func(n uint64)
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

	// commitMu is the produce lock: it serialises commits, rolls and
	// retention, and guards enc, floor and failed.
	commitMu sync.Mutex
	enc      *frameEncoder
	verify   []byte
	group    []byte // one group commit's frames, written with one write
	floor    int64  // newest commit time committed; stamps are raised to it
	failed   error  // a sync or verify failure: the file state is unknown

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

	cache     frameCache
	notify    *notify.Broadcast
	hwmw      *hwmWriter
	persisted atomic.Uint64
	corrupt   atomic.Uint64
	reads     atomic.Uint64

	stop chan struct{}
	done chan struct{}
}

// Open opens (creating if needed) the log in dir and recovers it.
func Open(dir string, opts Options) (*Log, error) {
	opts.withDefaults()
	enc, err := newEncoder(opts.Codec, opts.Level)
	if err != nil {
		return nil, err
	}
	fsys := vfs.Or(opts.FS)
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l := &Log{dir: dir, opts: opts, fs: fsys, enc: enc, notify: notify.New(),
		stop: make(chan struct{}), done: make(chan struct{})}
	l.cache.init()
	if err := l.load(); err != nil {
		l.closeFiles()
		return nil, err
	}
	// Clear the boundary before anything can be appended: from now until a
	// clean close, the directory no longer describes itself exactly.
	if l.hwmw, err = openHWMWriter(fsys, dir); err == nil {
		err = l.hwmw.write(HWMFile{HWM: l.hwm})
	}
	if err != nil {
		l.closeFiles()
		return nil, fmt.Errorf("open %s: hwm file: %w", dir, err)
	}
	l.persisted.Store(l.hwm)
	go l.persistLoop()
	return l, nil
}

// load opens the segment files and recovers the active one.
func (l *Log) load() error {
	bases, err := listSegments(l.fs, l.dir)
	if err != nil {
		return err
	}
	if len(bases) == 0 {
		// A fresh directory. If an hwm file survives a wiped segment set,
		// start there so offsets never go backwards.
		start := uint64(0)
		if h, err := ReadHWMFileFS(l.fs, l.dir); err == nil {
			start = h.HWM
		}
		s, err := createSegment(l.fs, l.dir, start)
		if err != nil {
			return err
		}
		l.segs = []*segment{s}
		l.hwm, l.oldest = start, start
		return nil
	}
	for i, b := range bases {
		flag := os.O_RDONLY
		if i == len(bases)-1 {
			flag = os.O_RDWR
		}
		path := filepath.Join(l.dir, segmentName(b))
		f, err := l.fs.OpenFile(path, flag, 0)
		if err != nil {
			return err
		}
		s := &segment{base: b, path: path, f: f, newestAt: -1, oldestAt: -1}
		l.segs = append(l.segs, s)
		if i > 0 {
			prev := l.segs[i-1]
			if b <= prev.base {
				return fmt.Errorf("open %s: segments out of order", l.dir)
			}
			prev.end = b
			fi, err := prev.f.Stat()
			if err != nil {
				return err
			}
			prev.size = fi.Size()
		}
	}
	active := l.segs[len(l.segs)-1]
	newest, err := recoverActive(active, l.opts.SkipCorrupt)
	if err != nil {
		return err
	}
	if newest < 0 && len(l.segs) > 1 {
		// The active segment is empty (a roll just happened): the floor is
		// in the newest record of the sealed segment before it.
		if newest, err = l.segs[len(l.segs)-2].newestTime(); err != nil {
			return fmt.Errorf("open %s: recover commit-time floor: %w", l.dir, err)
		}
	}
	l.floor = max(newest, 0)
	l.hwm = active.end
	l.oldest = l.segs[0].base
	return nil
}

func createSegment(fsys vfs.FS, dir string, base uint64) (*segment, error) {
	path := filepath.Join(dir, segmentName(base))
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if err := fsys.SyncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	return &segment{base: base, path: path, f: f, end: base, idxBuilt: true, newestAt: -1, oldestAt: -1}, nil
}

// roll seals the active segment and opens a new one named by the HWM. Every
// commit already fsynced the old file, so sealing is only bookkeeping.
// Called under commitMu.
func (l *Log) roll() (*segment, error) {
	l.mu.RLock()
	base := l.hwm
	l.mu.RUnlock()
	s, err := createSegment(l.fs, l.dir, base)
	if err != nil {
		return nil, fmt.Errorf("roll %s at offset %d: %w", l.dir, base, err)
	}
	l.mu.Lock()
	l.segs = append(l.segs, s)
	l.mu.Unlock()
	return s, nil
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
	l.mu.RLock()
	hwm, closed := l.hwm, l.closed
	l.mu.RUnlock()
	if closed || hwm == l.persisted.Load() {
		return
	}
	t0 := time.Now()
	if err := l.hwmw.write(HWMFile{HWM: hwm}); err == nil {
		l.persisted.Store(hwm)
		if h := l.opts.Hooks.HWMPersist; h != nil {
			h(time.Since(t0))
		}
	}
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

// HWM is the exclusive upper bound of committed records.
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

// Wake wakes every waiter (the lease table calls it on expiry and nack).
func (l *Log) Wake() { l.notify.Fire() }

// Reads counts Read calls: how tests prove an idle delay cursor costs
// O(1) however long its backlog.
func (l *Log) Reads() uint64 { return l.reads.Load() }

// CorruptSkipped counts records readers skipped as unreadable.
func (l *Log) CorruptSkipped() uint64 { return l.corrupt.Load() }
