package schedule

import (
	"container/heap"
	"math"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/vfs"
)

// Horizon is how far ahead of the clock a bucket is read into memory by
// default: entries are popped from memory when they fall due, so a bucket
// is loaded one minute before its first entry can be.
const Horizon = time.Minute

// Options configure an Index.
type Options struct {
	FS  vfs.FS // nil: the real disk
	Dir string // the index's own directory (created on the first Sync)
	Now func() time.Time
	// Horizon: 0 means the package's Horizon.
	Horizon time.Duration
	// CheckpointBytes is the journal size past which a Sync fsyncs the
	// bucket files and empties the journal; 0 means 1 MiB.
	CheckpointBytes int64
}

// Index is the durable schedule of one partition. It is safe for
// concurrent use.
type Index struct {
	fs      vfs.FS
	dir     string
	now     func() time.Time
	horizon time.Duration
	ckpt    int64

	syncMu sync.Mutex // serialises Sync and Close: the file writes

	mu       sync.Mutex
	buckets  map[int64]*bucket
	unloaded minuteHeap // minutes of buckets not loaded yet
	loaded   int64      // every bucket at or below this minute is loaded
	due      dueHeap    // entries of loaded buckets, not popped yet
	pend     []op       // added or settled since the last Sync took them
	writing  []op       // taken by a Sync that has not written them yet
	live     int        // adds not settled, every bucket
	out      int        // popped, not settled
	files    *fileSet   // open journal and the bucket files written since the last checkpoint
	closed   bool

	// low caches Low's answer (lowOK: some entry is live), so a caller
	// asking on every replica fetch pays no walk over the buckets. It is
	// walked again only after a bucket's last live entry was settled.
	low      uint64
	lowOK    bool
	lowStale bool
}

// bucket is what memory keeps of one minute's file.
type bucket struct {
	live   int    // adds not settled (exact once loaded; see load)
	low    uint64 // no live add in the bucket is below this
	loaded bool
}

// Open opens the index in opts.Dir: it replays the journal into the
// bucket files, cuts torn tails, and loads the buckets within the
// horizon. A missing directory is an empty index.
func Open(opts Options) (*Index, error) {
	x := &Index{fs: vfs.Or(opts.FS), dir: opts.Dir, now: opts.Now, horizon: opts.Horizon, ckpt: opts.CheckpointBytes,
		buckets: make(map[int64]*bucket), loaded: math.MinInt64, lowStale: true}
	if x.now == nil {
		x.now = time.Now
	}
	if x.horizon <= 0 {
		x.horizon = Horizon
	}
	if x.ckpt <= 0 {
		x.ckpt = 1 << 20
	}
	x.files = &fileSet{fs: x.fs, dir: x.dir}
	counts, err := x.files.recover()
	if err != nil {
		return nil, err
	}
	for m, c := range counts {
		x.buckets[m] = &bucket{live: c.live, low: c.low}
		x.live += c.live
		heap.Push(&x.unloaded, m)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.advance(x.now()); err != nil {
		return nil, err
	}
	return x, nil
}

// Add schedules offset for due (Unix ms). It is durable once a Sync that
// began after it returned nil.
func (x *Index) Add(offset uint64, due int64) {
	e := Entry{Offset: offset, Due: min(max(due, 0), MaxDue)}
	x.mu.Lock()
	defer x.mu.Unlock()
	m := e.minute()
	b := x.buckets[m]
	if b == nil {
		b = &bucket{low: offset}
		x.buckets[m] = b
		if m > x.loaded {
			heap.Push(&x.unloaded, m)
		} else {
			b.loaded = true
		}
	}
	b.live++
	b.low = min(b.low, offset)
	x.live++
	if !x.lowStale {
		x.low, x.lowOK = min(x.low, offset), true // low is MaxUint64 while none is live
	}
	x.pend = append(x.pend, op{Entry: e})
	if b.loaded {
		heap.Push(&x.due, e)
	}
}

// Pending counts the adds and settles a Sync has not taken yet: what a
// caller filing many records at once syncs early to bound (memory holds
// them until then).
func (x *Index) Pending() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.pend)
}

// Settle records that the entry (offset, due), popped before, needs no
// more delivery: acked, dead-lettered or gone. Its bucket's file is
// removed at a checkpoint once every add in it is settled. A settle lost
// in a crash makes the record due again (at least once).
func (x *Index) Settle(e Entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	b := x.buckets[e.minute()]
	if b == nil || b.live == 0 {
		return
	}
	b.live--
	x.live--
	x.out = max(x.out-1, 0)
	if b.live == 0 {
		x.lowStale = true
	}
	x.pend = append(x.pend, op{Entry: e, settle: true})
}

// Pop returns the entries due at now, at most max of them, earliest due
// first, loading the buckets that came within the horizon. An entry is
// returned once per life of the Index; the caller settles it (Settle).
func (x *Index) Pop(max int) ([]Entry, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	now := x.now()
	if err := x.advance(now); err != nil {
		return nil, err
	}
	var out []Entry
	for len(out) < max && len(x.due) > 0 && x.due[0].Due <= now.UnixMilli() {
		out = append(out, heap.Pop(&x.due).(Entry))
	}
	x.out += len(out)
	return out, nil
}

// Next is when Pop next has something to do: the earliest due entry in
// memory, or the time the next bucket comes within the horizon. ok is
// false when the index holds nothing waiting.
func (x *Index) Next() (at time.Time, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var ms int64 = math.MaxInt64
	if len(x.due) > 0 {
		ms = x.due[0].Due
	}
	if len(x.unloaded) > 0 {
		ms = min(ms, x.unloaded[0]*60_000-x.horizon.Milliseconds())
	}
	if ms == math.MaxInt64 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// Stats is what the index holds.
type Stats struct {
	// Waiting counts entries not due yet (not popped): records scheduled
	// for later.
	Waiting int
	// Out counts entries popped and not settled: due records the queue
	// is delivering.
	Out int
	// Buckets counts bucket files; Loaded those read into memory.
	Buckets, Loaded int
}

// Stats reports the index's counts.
func (x *Index) Stats() Stats {
	x.mu.Lock()
	defer x.mu.Unlock()
	st := Stats{Waiting: x.live - x.out, Out: x.out, Buckets: len(x.buckets)}
	for _, b := range x.buckets {
		if b.loaded {
			st.Loaded++
		}
	}
	return st
}

// Low is at or below the offset of every entry not settled; ok is false
// when there is none. A frontier copied to another node (which has no
// index) must not pass it.
func (x *Index) Low() (low uint64, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lowStale {
		x.low, x.lowOK = math.MaxUint64, false
		for _, b := range x.buckets {
			if b.live > 0 {
				x.low, x.lowOK = min(x.low, b.low), true
			}
		}
		x.lowStale = false
	}
	return x.low, x.lowOK
}

// advance loads every bucket whose minute came within the horizon of now.
func (x *Index) advance(now time.Time) error {
	through := minuteOf(now.Add(x.horizon).UnixMilli())
	for len(x.unloaded) > 0 && x.unloaded[0] <= through {
		m := heap.Pop(&x.unloaded).(int64)
		if err := x.load(m); err != nil {
			heap.Push(&x.unloaded, m)
			return err
		}
	}
	x.loaded = max(x.loaded, through)
	return nil
}

// load reads bucket m into the due heap: its file's adds not settled, and
// the ops not written to the file yet.
func (x *Index) load(m int64) error {
	b := x.buckets[m]
	if b == nil || b.loaded {
		return nil
	}
	set := make(map[uint64]int64)
	apply := func(o op) {
		if o.minute() != m {
			return
		}
		if o.settle {
			delete(set, o.Offset)
		} else {
			set[o.Offset] = o.Due
		}
	}
	if err := x.files.readBucket(m, apply); err != nil {
		return err
	}
	for _, o := range x.writing {
		apply(o)
	}
	for _, o := range x.pend {
		apply(o)
	}
	// The file's count is exact: a record added twice (deferred again
	// after a crash rewound the frontier) is one entry.
	x.live += len(set) - b.live
	b.live, b.loaded = len(set), true
	if b.live == 0 {
		x.lowStale = true
	}
	for off, due := range set {
		heap.Push(&x.due, Entry{Offset: off, Due: due})
	}
	return nil
}

// Clear forgets every entry and removes the index's files: the
// partition's records were purged.
func (x *Index) Clear() error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.buckets = make(map[int64]*bucket)
	x.unloaded, x.due, x.pend, x.writing = nil, nil, nil, nil
	x.live, x.out = 0, 0
	x.lowStale = true
	return x.files.removeAll()
}

// Close closes the journal. Ops not synced are dropped, as a crash
// would drop them; what was synced is replayed by the next Open.
func (x *Index) Close() error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	return x.files.close()
}

type dueHeap []Entry

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	return h[i].Due < h[j].Due || h[i].Due == h[j].Due && h[i].Offset < h[j].Offset
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(v any)   { *h = append(*h, v.(Entry)) }
func (h *dueHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

type minuteHeap []int64

func (h minuteHeap) Len() int           { return len(h) }
func (h minuteHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minuteHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minuteHeap) Push(v any)        { *h = append(*h, v.(int64)) }
func (h *minuteHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
