package storage

import (
	"sync"
	"unsafe"
)

// The caches keep sequential readers (consumers, cursors, replay) from
// re-seeking and re-decoding: several readers tailing one partition share
// each decoded frame. Retention clears them under the log's write lock.
//
// The bounds are per open log, so a node's frame memory is at most
// cacheBytes times its open partitions (idle logs are evicted). At 32 MiB
// a node with three busy partitions kept ~96 MB of frames once commits
// grew large (RSS 94–106 MB after a batch produce + consume round of
// 400,000 records); at 4 MiB it is 72–74 MB and consumers, which read
// just behind the tail, were not slower in interleaved runs (narad bench,
// batch 100, 8 consumers). A reader further behind decodes from the page
// cache instead. A frame counts its decoded Record headers too
// (recordHeaderBytes each, read.go): with those counted, 4 MiB still let
// a batch consume keep a 24 MB live heap, and at 1 MiB RSS after the same
// round was 46–49 MB (was 69–77 MB), batch consume no slower (five runs
// each, measured during the session that set it; the figures in
// docs/performance.md are scripts/bench.sh's).
const (
	cacheFrames    = 64
	cacheBytes     = 1 << 20
	cachePositions = 1024
)

// recordHeaderBytes is what a decoded Record costs beyond the raw frame
// bytes it points into.
const recordHeaderBytes = int(unsafe.Sizeof(Record{}))

type cachedFrame struct {
	h    frameHeader
	recs []Record
	size int
}

type frameKey struct {
	seg uint64
	pos int64
}

type posEntry struct {
	seg uint64
	pos int64
}

type frameCache struct {
	mu     sync.Mutex
	frames map[frameKey]*cachedFrame
	order  []frameKey // insertion order, oldest first (FIFO is enough for tailing)
	bytes  int
	pos    map[uint64]posEntry // frame start offset -> position
	skips  map[uint64]uint64   // unreadable range start -> resume offset
}

func (c *frameCache) init() {
	c.frames = make(map[frameKey]*cachedFrame)
	c.pos = make(map[uint64]posEntry)
	c.skips = make(map[uint64]uint64)
}

func (c *frameCache) clear() {
	c.mu.Lock()
	c.init()
	c.order, c.bytes = nil, 0
	c.mu.Unlock()
}

// position returns where the frame starting at o lies in segment seg, if a
// reader recently finished the frame before it. Only exact frame starts are
// cached; a reader in the middle of a frame finds it through frame().
func (c *frameCache) position(seg, o uint64) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pos[o]
	if !ok || e.seg != seg {
		return 0, false
	}
	return e.pos, true
}

// putPosition remembers that the frame starting at o lies at pos of
// segment seg (or will: a follower's next fetch starts where its last
// one ended, at the end of what was written).
func (c *frameCache) putPosition(seg, o uint64, pos int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pos) >= cachePositions {
		clear(c.pos)
	}
	c.pos[o] = posEntry{seg, pos}
}

// containing returns a cached frame of segment seg that holds offset o.
// Readers taking one record per call land mostly inside a frame another
// reader just decoded; finding it here, newest first among at most
// cacheFrames, saves the seek's header reads from the segment index.
func (c *frameCache) containing(seg, o uint64) (*cachedFrame, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.order) - 1; i >= 0; i-- {
		k := c.order[i]
		if k.seg != seg {
			continue
		}
		if fr, ok := c.frames[k]; ok && fr.h.contains(o) {
			return fr, true
		}
	}
	return nil, false
}

func (c *frameCache) frame(seg uint64, pos int64) (*cachedFrame, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fr, ok := c.frames[frameKey{seg, pos}]
	return fr, ok
}

func (c *frameCache) put(seg uint64, pos int64, fr *cachedFrame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := frameKey{seg, pos}
	if _, ok := c.frames[k]; ok {
		return
	}
	for len(c.order) > 0 && (len(c.order) >= cacheFrames || c.bytes+fr.size > cacheBytes) {
		old := c.order[0]
		c.order = c.order[1:]
		if f, ok := c.frames[old]; ok {
			c.bytes -= f.size
			delete(c.frames, old)
		}
	}
	c.frames[k] = fr
	c.order = append(c.order, k)
	c.bytes += fr.size
	if len(c.pos) >= cachePositions {
		clear(c.pos)
	}
	c.pos[fr.h.base] = posEntry{seg, pos}
	c.pos[fr.h.end()] = posEntry{seg, pos + fr.h.frameLen()}
}

func (c *frameCache) skip(o uint64) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	to, ok := c.skips[o]
	return to, ok
}

func (c *frameCache) putSkip(o, to uint64) {
	c.mu.Lock()
	c.skips[o] = to
	c.mu.Unlock()
}
