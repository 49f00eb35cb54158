package storage

import (
	"fmt"
)

// RetentionResult counts what one retention pass deleted.
type RetentionResult struct {
	Segments int
	Bytes    int64
	Records  uint64
}

// ApplyRetention deletes sealed segments whose newest record is older than
// retentionMs (0 keeps everything). Granularity is the segment, so a record
// lives at least retentionMs and at most that plus one segment's fill time.
//
// An active segment whose newest record is already past retention is rolled
// first (choice: the spec deletes only sealed segments; without the roll a
// topic that stopped receiving writes would keep its last segment forever).
// The oldest offset moves up; readers below it get BelowOldestError.
func (l *Log) ApplyRetention(retentionMs int64) (RetentionResult, error) {
	var res RetentionResult
	if retentionMs <= 0 {
		return res, nil
	}
	cutoff := l.opts.Now().UnixMilli() - retentionMs
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.mu.RLock()
	closed := l.closed
	segs := append([]*segment(nil), l.segs...)
	l.mu.RUnlock()
	if closed {
		return res, ErrClosed
	}
	if active := segs[len(segs)-1]; active.size > 0 && active.newestAt >= 0 && active.newestAt < cutoff && l.failed == nil {
		s, err := l.roll()
		if err != nil {
			return res, err
		}
		segs = append(segs, s)
	}
	// Commit times never decrease, so expired segments form a prefix.
	n := 0
	for _, s := range segs[:len(segs)-1] {
		t, err := s.newestTime()
		if err != nil {
			return res, fmt.Errorf("retention of %s: %w", l.dir, err)
		}
		if t >= cutoff {
			break
		}
		n++
	}
	if n == 0 {
		return res, nil
	}
	doomed := segs[:n]
	l.mu.Lock()
	l.segs = l.segs[n:]
	l.oldest = l.segs[0].base
	l.unlockChecked("retention", nil)
	l.cache.clear()
	for _, s := range doomed {
		res.Segments++
		res.Bytes += s.size
		res.Records += s.end - s.base
		s.f.Close()
		if err := l.fs.Remove(s.path); err != nil {
			return res, fmt.Errorf("retention: remove %s: %w", s.path, err)
		}
	}
	return res, l.fs.SyncDir(l.dir)
}
