package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/narad-io/narad/internal/vfs"
)

// TruncateTo cuts every local record at or past off: a replica's
// never-committed tail that a new leader's epoch does not hold (package
// replica, TruncationPoint). It refuses (an error wrapping
// ErrBelowCommitted, nothing changed) when off < HWM(): readers may have
// seen those records. It does nothing when off >= End().
//
// Whole segments past off are removed; in the segment holding off, a cut
// at a frame boundary truncates the file there, and a cut inside a batch
// frame re-writes the frame's kept head — records [frame base, off), byte
// for byte the same offsets, commit times, keys, headers and payloads —
// as a new frame. The commit-time floor becomes the newest kept record's
// time, so what the new leader sends next (never older than that: it holds
// the same prefix) is accepted, and nothing later is stamped below it.
//
// Crash safety, step by step (each leaves a directory that reopens as a
// contiguous log holding every record below off):
//
//  1. The hwm file's claim is lowered to off first. Recovery keeps every
//     valid frame past the claim (only a torn tail is cut), so a crash
//     before the cut reopens with the old End and reports nothing lost;
//     the replica simply truncates again. The other order would be wrong:
//     a cut made durable before the claim is lowered, then a crash, and
//     recovery would report [off, claim) as lost acknowledged records
//     (Hooks.Shortfall) and resume at the claim, past records no longer
//     there.
//  2. Later segments are removed newest first, the directory fsynced after
//     each: a crash leaves a prefix of them, still contiguous.
//  3. A cut at a frame boundary is a truncate and an fdatasync: the file
//     is either as it was or cut.
//  4. A cut inside a frame writes the kept head, alone, as a complete
//     segment file named by the frame's base, atomically (temp file,
//     fsync, rename, directory fsync: vfs.WriteFileAtomic). When the frame
//     began its segment, that replaces the segment. Otherwise the old
//     segment now ends (for readers and recovery, which end a segment
//     where the next begins) before the frame, which it still holds,
//     shadowed, until it is cut at the frame's position. Before the rename
//     the old frame holds the head records; after it, the new file does.
//
// A failure after step 1 fences the log for good (Recover refuses): the
// files are consistent for a reopen but not known to match what the log
// holds in memory, so the owner reopens it. The frame cache and the WAL
// sources the log holds (applied) are rebuilt from what is kept; the
// rewritten head carries no source.
func (l *Log) TruncateTo(off uint64) error {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if l.failed != nil {
		return l.failed
	}
	if err := l.forgetJournalLocked(); err != nil {
		return fmt.Errorf("truncate %s at %d: %w", l.dir, off, err)
	}
	l.mu.Lock()
	end := l.end
	switch {
	case l.closed:
		l.mu.Unlock()
		return ErrClosed
	case off < l.hwm:
		hwm := l.hwm
		l.mu.Unlock()
		return fmt.Errorf("truncate %s at %d: %w %d", l.dir, off, ErrBelowCommitted, hwm)
	case off >= end:
		l.mu.Unlock()
		return nil
	case off < l.oldest:
		oldest := l.oldest
		l.mu.Unlock()
		return fmt.Errorf("truncate %s at %d: below the oldest retained record %d", l.dir, off, oldest)
	}
	// Planned under the write lock (one frame read, rarely), so that no
	// Release slips between the check above and the end moving down:
	// from here neither ReadTo nor Release goes past off.
	p, err := l.planCutLocked(off)
	if err != nil {
		l.mu.Unlock()
		return fmt.Errorf("truncate %s at %d: %w", l.dir, off, err)
	}
	l.end = off
	l.mu.Unlock()
	if l.persisted.Load() > off {
		if err := l.hwmw.write(HWMFile{HWM: off}); err != nil {
			// Nothing is cut yet: the log is as it was.
			l.mu.Lock()
			l.end = end
			l.mu.Unlock()
			return fmt.Errorf("truncate %s at %d: lower the hwm file first: %w", l.dir, off, err)
		}
		l.persisted.Store(off)
	}
	// Whatever fails next, nothing durable about the log may speak past
	// off again (Close writes the hwm file from it).
	l.flushed.Store(off)
	if err := l.cut(p); err != nil {
		e := &IOError{Op: "truncate", Path: l.dir, Err: err, Fenced: true}
		l.failed, l.mustReopen = e, true
		l.fenced.Store(true)
		l.log.Error("partition log fenced: a truncation failed part way; its files reopen consistent, so the log refuses writes until it is reopened",
			"dir", l.dir, "offset", off, "err", err)
		if h := l.opts.Hooks.Fenced; h != nil {
			h()
		}
		l.endNote.Fire()
		return e
	}
	if assertInvariants {
		l.mu.Lock()
		l.unlockChecked("a truncation", l.allSegmentsChecks())
	}
	l.endNote.Fire()
	return nil
}

// cutPlan is where a truncation cuts, found before anything changes.
type cutPlan struct {
	off  uint64
	seg  int      // index in segs of the segment holding off
	pos  int64    // byte position of the first frame not kept whole
	head []Record // with a cut inside a frame: its records below off
	base uint64   // that frame's base offset
}

// planCutLocked finds where to cut for off (oldest <= off < end). Called
// under l.mu.
func (l *Log) planCutLocked(off uint64) (cutPlan, error) {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > off }) - 1
	p := cutPlan{off: off, seg: i}
	s := l.segs[i]
	if off == s.base {
		return p, nil
	}
	pos, h, err := s.seek(off)
	if err != nil {
		return p, fmt.Errorf("%s: find offset %d: %w", s.name(), off, err)
	}
	p.pos = pos
	if h.base == off {
		return p, nil
	}
	_, recs, err := s.readFrame(pos)
	if err != nil {
		return p, fmt.Errorf("%s: frame at %d: %w", s.name(), pos, err)
	}
	p.head, p.base = recs[:off-h.base], h.base
	return p, nil
}

// cut carries out p on the files and in memory (steps 2-4 of TruncateTo).
// Called under commitMu with l.end already at p.off.
func (l *Log) cut(p cutPlan) error {
	l.mu.RLock()
	segs := append([]*segment(nil), l.segs...)
	l.mu.RUnlock()
	for j := len(segs) - 1; j > p.seg; j-- {
		s := segs[j]
		l.mu.Lock()
		l.segs = l.segs[:j]
		l.mu.Unlock()
		s.f.Close()
		if err := l.fs.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := l.fs.SyncDir(l.dir); err != nil {
			return err
		}
	}
	s := segs[p.seg]
	if p.head != nil && p.base == s.base {
		return l.replaceSegment(s, p)
	}
	var shadow *segment
	if p.head != nil {
		var err error
		if shadow, err = l.headSegment(p); err != nil {
			return err
		}
	}
	// s is the active segment (again, or still): it needs a handle that
	// writes (sealed segments are opened read-only).
	f, err := l.fs.OpenFile(s.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := s.f
	s.f = f
	if shadow != nil {
		// Readers of [base, off) now go to the head's own file; s ends
		// before the frame it still holds.
		s.end = p.base
		l.segs = append(l.segs, shadow)
		l.cache.clear()
	}
	l.mu.Unlock()
	old.Close()
	if err := f.Truncate(p.pos); err != nil {
		return err
	}
	if err := f.Datasync(); err != nil {
		return err
	}
	l.mu.Lock()
	s.size = p.pos
	if shadow == nil {
		s.end = p.off
	}
	s.mu.Lock()
	k := sort.Search(len(s.idx), func(k int) bool { return s.idx[k].pos >= p.pos })
	s.idx = s.idx[:k]
	s.newestAt, s.oldestAt = -1, -1
	s.mu.Unlock()
	l.cache.clear()
	l.mu.Unlock()
	return l.afterCut()
}

// replaceSegment writes p's head as the whole of s (the cut frame was s's
// first) and switches s to the new file.
func (l *Log) replaceSegment(s *segment, p cutPlan) error {
	n, err := l.writeHead(s.path, p)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := s.f
	s.f, s.size, s.end = n.f, n.size, n.end
	s.mu.Lock()
	s.idx, s.idxBuilt = n.idx, true
	s.newestAt, s.oldestAt = n.newestAt, n.oldestAt
	s.mu.Unlock()
	l.cache.clear()
	l.mu.Unlock()
	old.Close()
	return l.afterCut()
}

// headSegment writes p's head as a new segment file named by its base.
func (l *Log) headSegment(p cutPlan) (*segment, error) {
	return l.writeHead(filepath.Join(l.dir, segmentName(p.base)), p)
}

// writeHead writes p's head as one frame, the whole content of path
// (atomically), opens it for appending and verifies the frame.
func (l *Log) writeHead(path string, p cutPlan) (*segment, error) {
	frame, err := l.enc.encodeKept(p.base, p.head)
	if err != nil {
		return nil, err
	}
	if err := vfs.WriteFileAtomic(l.fs, path, frame); err != nil {
		return nil, err
	}
	f, err := l.fs.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	n := &segment{base: p.base, path: path, f: f, size: int64(len(frame)), end: p.off, idxBuilt: true,
		oldestAt: p.head[0].CommittedAt, newestAt: p.head[len(p.head)-1].CommittedAt}
	n.addIndex(p.base, 0)
	if h, _, err := n.readFrame(0); err != nil || h.end() != p.off {
		f.Close()
		return nil, fmt.Errorf("verify the rewritten head in %s: %v (ends at %d, want %d)", n.name(), err, h.end(), p.off)
	}
	return n, nil
}

// afterCut rebuilds what the log derives from its newest records: the
// commit-time floor, the WAL sources held, the flushed position.
func (l *Log) afterCut() error {
	l.mu.RLock()
	segs := l.segs
	l.mu.RUnlock()
	active := segs[len(segs)-1]
	floor := int64(-1)
	for i := len(segs) - 1; i >= 0 && floor < 0; i-- {
		t, err := segs[i].newestTime()
		if err != nil {
			return fmt.Errorf("recover the commit-time floor: %w", err)
		}
		floor = t
	}
	l.floor = max(floor, 0)
	clear(l.applied)
	if err := segmentSources(active, l.applied); err != nil {
		return err
	}
	if err := l.sealedSources(l.applied); err != nil {
		return err
	}
	l.flushedPos = active.size
	l.flushed.Store(active.end)
	return nil
}
