package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/narad-io/narad/internal/notify"
	"github.com/narad-io/narad/internal/vfs"
)

// Open opens (creating if needed) the log in dir and recovers it.
//
// Recovery checks what it finds against what the directory says was
// published: the hwm file (written only after records were verified, so it
// never claims more than was published) and the consumer frontier. When the
// segments hold fewer records than the hwm file claims — a truncated or
// removed segment file — the loss is logged as an error naming the file and
// the offsets, reported to Hooks.Shortfall, and the log continues at the
// claimed high watermark in a new segment: offsets never go backwards, and
// readers walking over the lost range are told it is a gap (Read's Skipped),
// not the end of the log.
func Open(dir string, opts Options) (*Log, error) {
	opts.withDefaults()
	enc, err := newEncoder(opts.Codec, opts.Level)
	if err != nil {
		return nil, err
	}
	fsys := vfs.Or(opts.FS)
	// Durably: a partition (or topic) directory whose entry a power cut
	// took would come back empty at offset 0, its records acknowledged.
	if err := vfs.MkdirAllDurable(fsys, dir, 0o755); err != nil {
		return nil, err
	}
	l := &Log{dir: dir, opts: opts, fs: fsys, enc: enc, notify: notify.New(), log: opts.Logger,
		applied: map[uint64]uint64{}, stop: make(chan struct{}), done: make(chan struct{})}
	if opts.Held && opts.Journal != nil {
		l.jnl = opts.Journal
		// A log that closed with journaled frames its own fdatasync could
		// not make durable gets them back before recovery reads the files.
		if err := l.jnl.Restore(dir); err != nil {
			return nil, fmt.Errorf("open %s: %w", dir, err)
		}
	}
	l.endNote = l.notify
	l.cache.init()
	c, err := l.load()
	if err != nil {
		l.closeFiles()
		return nil, err
	}
	l.end = l.hwm
	if opts.Held {
		// Readers start at the committed checkpoint: everything below it
		// was committed, and what lies past it may be a tail a failover
		// takes back, until the leader's word (Release) says otherwise.
		st, err := ReadReplicaStateFS(fsys, dir)
		if err != nil {
			l.closeFiles()
			return nil, fmt.Errorf("open %s: %w", dir, err)
		}
		l.state = st
		l.hwm = min(st.Committed, l.end)
		// The consumer frontier is a committed point too: it is written
		// only at or below what readers saw, and readers see only
		// committed records. Without this, a frontier persisted after the
		// last checkpoint would be clamped back below records consumers
		// had acknowledged, and redelivered. (A frontier past the log's
		// end vouches for nothing: damage, which the broker clamps.)
		if c.frontier <= l.end { // the claim load read (a failed read failed the Open)
			l.hwm = max(l.hwm, c.frontier)
		}
		l.endNote = notify.New()
	}
	l.openHWM = l.hwm
	l.flushed.Store(l.end)
	l.flushedPos = l.segs[len(l.segs)-1].size
	// Clear the boundary before anything can be appended: from now until a
	// clean close, the directory no longer describes itself exactly.
	_, statErr := fsys.Stat(filepath.Join(dir, hwmFileName))
	if l.hwmw, err = openHWMWriter(fsys, dir); err == nil {
		err = l.hwmw.write(HWMFile{HWM: l.end})
		if err == nil && errors.Is(statErr, fs.ErrNotExist) {
			err = fsys.SyncDir(dir) // a new hwm file: its entry too
		}
		if err != nil {
			l.hwmw.close()
		}
	}
	if err != nil {
		l.closeFiles()
		return nil, fmt.Errorf("open %s: hwm file: %w", dir, err)
	}
	l.persisted.Store(l.end)
	if assertInvariants {
		l.mu.Lock()
		l.unlockChecked("recovery", l.allSegmentsChecks())
	}
	go l.persistLoop()
	return l, nil
}

// claims is what a partition directory says was published, besides the
// segments themselves.
type claims struct {
	hwm      uint64 // the hwm file's high watermark (0 without a readable file)
	frontier uint64 // the consumer frontier (0 without one)
}

// readClaims reads the directory's claims. A claim file that is missing
// or unreadable as a claim (torn, foreign) counts as no claim. One whose
// read fails (EIO) is an error: taking it for no claim would let recovery
// cut a damaged tail of acknowledged records as torn, or start a
// directory without segments back at offset 0.
func (l *Log) readClaims() (claims, error) {
	var c claims
	h, err := ReadHWMFileFS(l.fs, l.dir)
	if err == nil {
		c.hwm = h.HWM
	} else if callFailed(err) {
		return c, &IOError{Op: "read", Path: filepath.Join(l.dir, hwmFileName), Err: err}
	}
	path := filepath.Join(l.dir, ConsumerOffsetFile)
	f, ok, err := ReadOffsetFileFS(l.fs, path)
	if err == nil && ok {
		c.frontier = f
	} else if callFailed(err) {
		return c, &IOError{Op: "read", Path: path, Err: err}
	}
	return c, nil
}

// callFailed reports whether err is a file call that failed (EIO, EACCES,
// …), not a missing file and not bytes that do not parse.
func callFailed(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && !errors.Is(err, fs.ErrNotExist)
}

// load opens the segment files, recovers the active one and checks the
// result against the directory's claims.
func (l *Log) load() (claims, error) {
	bases, err := listSegments(l.fs, l.dir)
	if err != nil {
		return claims{}, err
	}
	c, err := l.readClaims()
	if err != nil {
		return c, err
	}
	if len(bases) == 0 {
		// A fresh directory — or one whose segment files were removed while
		// its hwm file survived. Start at the claim so offsets never go
		// backwards.
		if c.hwm > 0 {
			l.shortfall(filepath.Join(l.dir, segmentName(0)), 0, c.hwm,
				"no segment file is left in the partition directory")
		}
		s, err := createSegment(l.fs, l.dir, c.hwm)
		if err != nil {
			return c, err
		}
		l.segs = []*segment{s}
		l.hwm, l.oldest = c.hwm, c.hwm
		l.checkFrontier(c)
		return c, nil
	}
	for i, b := range bases {
		flag := os.O_RDONLY
		if i == len(bases)-1 {
			flag = os.O_RDWR
		}
		path := filepath.Join(l.dir, segmentName(b))
		f, err := l.fs.OpenFile(path, flag, 0)
		if err != nil {
			return c, err
		}
		s := &segment{base: b, path: path, f: f, newestAt: -1, oldestAt: -1}
		l.segs = append(l.segs, s)
		if i > 0 {
			prev := l.segs[i-1]
			if b <= prev.base {
				return c, fmt.Errorf("open %s: segments out of order", l.dir)
			}
			prev.end = b
			fi, err := prev.f.Stat()
			if err != nil {
				return c, err
			}
			prev.size = fi.Size()
		}
	}
	active := l.segs[len(l.segs)-1]
	newest, err := recoverActive(active, l.opts.SkipCorrupt, c.hwm, l.log, l.applied)
	if err != nil {
		return c, err
	}
	if err := l.sealedSources(l.applied); err != nil {
		return c, err
	}
	// What recovery found may be lazy frames a crashed process left in the
	// page cache: make them durable before anything relies on them (the
	// WAL is released past records the log holds).
	if active.size > 0 {
		if err := active.f.Datasync(); err != nil {
			return c, fmt.Errorf("open %s: fdatasync the recovered active segment: %w", l.dir, err)
		}
	}
	if newest < 0 && len(l.segs) > 1 {
		// The active segment is empty (a roll just happened): the floor is
		// in the newest record of the sealed segment before it.
		if newest, err = l.segs[len(l.segs)-2].newestTime(); err != nil {
			return c, fmt.Errorf("open %s: recover commit-time floor: %w", l.dir, err)
		}
	}
	l.floor = max(newest, 0)
	if c.hwm > active.end {
		l.shortfall(active.path, active.end, c.hwm, "the active segment ends before the recorded high watermark")
		// Seal what is there as covering up to the claim, and continue in
		// a new segment named by it: readers step over [end, claim) as a
		// gap, and no offset of it is ever handed out again.
		active.end = c.hwm
		s, err := createSegment(l.fs, l.dir, c.hwm)
		if err != nil {
			return c, fmt.Errorf("open %s: continue after the lost range: %w", l.dir, err)
		}
		l.segs = append(l.segs, s)
	}
	l.hwm = l.segs[len(l.segs)-1].end
	l.oldest = l.segs[0].base
	l.checkFrontier(c)
	return c, nil
}

// shortfall reports acknowledged records recovery could not find.
func (l *Log) shortfall(file string, from, to uint64, what string) {
	l.log.Error("partition log recovery: acknowledged records are missing; the log continues at the recorded high watermark and readers see the lost range as a gap",
		"file", file, "problem", what, "lost_from_offset", from, "lost_to_offset", to, "lost_records", to-from)
	if h := l.opts.Hooks.Shortfall; h != nil {
		h()
	}
}

// checkFrontier reports a consumer frontier above everything the log ever
// published. The broker keeps the hwm file at or above every frontier it
// persists (PersistHWM), so this is damage or an operator's mistake in the
// frontier file, not lost records; the broker clamps the frontier.
func (l *Log) checkFrontier(c claims) {
	if c.frontier > l.hwm {
		l.log.Error("consumer frontier is above the partition's high watermark; it will be clamped to it",
			"file", filepath.Join(l.dir, ConsumerOffsetFile), "frontier", c.frontier, "high_watermark", l.hwm)
	}
}

// createSegment creates the empty segment file for base and makes its
// directory entry durable. An empty file already there is taken over: it
// is what an earlier attempt left when its directory fsync failed, and
// refusing it would wedge every later roll on EEXIST.
func createSegment(fsys vfs.FS, dir string, base uint64) (*segment, error) {
	path := filepath.Join(dir, segmentName(base))
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		if f, err = fsys.OpenFile(path, os.O_RDWR, 0); err == nil {
			if fi, serr := f.Stat(); serr != nil || fi.Size() != 0 {
				f.Close()
				return nil, fmt.Errorf("segment %s already exists and is not empty (%v)", path, serr)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if err := fsys.SyncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	return &segment{base: base, path: path, f: f, end: base, idxBuilt: true, newestAt: -1, oldestAt: -1}, nil
}

// roll seals the active segment and opens a new one named by its end. A
// synchronous commit already fsynced the old file; lazy frames in it are
// fsynced now, so unflushed frames only ever sit in the active segment
// (recovery scans only that one). Called under commitMu.
func (l *Log) roll() (*segment, error) {
	l.mu.RLock()
	base, old := l.end, l.segs[len(l.segs)-1]
	l.mu.RUnlock()
	if err := l.syncActiveLocked(old); err != nil {
		return nil, err
	}
	s, err := createSegment(l.fs, l.dir, base)
	if err != nil {
		return nil, &IOError{Op: "create segment", Path: filepath.Join(l.dir, segmentName(base)), Err: err}
	}
	l.mu.Lock()
	l.segs = append(l.segs, s)
	l.unlockChecked("a roll", nil)
	l.flushedPos = 0
	return s, nil
}
