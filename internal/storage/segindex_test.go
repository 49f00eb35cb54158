package storage

import (
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
)

// Building a sealed segment's index after a reopen reads the segment a
// chunk at a time, not a read per frame header, and finds the entries
// the commits indexed while the segment was active.
func TestIndexWalkReadsChunksNotHeaders(t *testing.T) {
	dir := t.TempDir()
	fsys := &segReads{FS: vfs.Default}
	opts := Options{SegmentBytes: 3 * indexWalkBytes, FS: fsys}
	l := openT(t, dir, opts)
	seq := uint64(0)
	for l.segsLen() < 2 {
		seq++
		if _, _, err := l.CommitFrom(recs("r", 1, false), Source{Origin: 1, Seqs: []uint64{seq}, Lazy: true}); err != nil {
			t.Fatal(err)
		}
	}
	l.mu.RLock()
	first := l.segs[0]
	first.mu.Lock()
	want, size, frames := slices.Clone(first.idx), first.size, first.end-first.base
	first.mu.Unlock()
	l.mu.RUnlock()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = openT(t, dir, opts)
	defer l.Close()
	l.mu.RLock()
	first = l.segs[0]
	l.mu.RUnlock()
	fsys.reset()
	first.ensureIndex()
	reads := fsys.headers.Load() + fsys.frames.Load()
	if bound := (size + indexWalkBytes - 1) / indexWalkBytes; reads > bound {
		t.Errorf("the index walk of %d frames in %d bytes took %d reads, want at most %d", frames, size, reads, bound)
	}
	first.mu.Lock()
	got := slices.Clone(first.idx)
	first.mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("the walk indexed %d entries, the commits %d: %v, want %v", len(got), len(want), got, want)
	}
}

func (l *Log) segsLen() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.segs)
}
