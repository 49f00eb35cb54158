package hosted

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/storage"
)

// Queue is the queue state of one hosted partition: its lease table, the
// durable frontier and the durable delivery counts (counts.go). Only those
// two survive a crash; after a restart every record at or above the
// frontier is available again, its delivery count continuing.
type Queue struct {
	Key   Key
	Table *lease.Table
	// RecordBytes is the mean key+payload size of the records last read
	// for a consume here: how many leases a round reserves.
	RecordBytes atomic.Int64
	// groups: the topic's ordering is "group" (Table's Limits.Groups),
	// read by every lease round without taking the table's lock.
	groups atomic.Bool

	set     *Set
	path    string        // consumer.offset
	version atomic.Uint64 // topic record version the limits came from

	pmu       sync.Mutex // serialises frontier writes
	persisted uint64

	counts countsState // the delivery counts file (counts.go)

	sched *sched // scheduled records: the schedule and the due table (scheduled.go)
}

// Queue returns the partition's queue, loading the frontier file lazily
// from disk the first time the partition's queue is touched, and keeping
// its limits in step with the topic record: version is the record's, and
// limits are applied when it moved (alter is live).
func (s *Set) Queue(name string, partition int, version uint64, limits lease.Limits) (*Queue, error) {
	k := Key{name, partition}
	if q := s.PeekQueue(name, partition); q != nil {
		if old := q.version.Load(); old != version && q.version.CompareAndSwap(old, version) {
			q.setLimits(limits)
		}
		return q, nil
	}
	dir, err := s.Dir(name, partition)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, storage.ConsumerOffsetFile)
	stored, _, err := storage.ReadOffsetFileFS(s.fs, path)
	if err != nil {
		return nil, err
	}
	frontier, err := s.clampFrontier(k, stored)
	if err != nil {
		return nil, err
	}
	countsPath, counts, err := s.readCounts(k, dir)
	if err != nil {
		return nil, err
	}
	sc, err := s.openSchedule(dir, partition, limits)
	if err != nil {
		return nil, StorageErr(name, partition, "read its schedule", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.entry(k)
	if p.queue != nil {
		sc.index.Close()
		return p.queue, nil
	}
	q := &Queue{Key: k, set: s, path: path, persisted: stored, sched: sc,
		Table: lease.New(partition, frontier, limits, clockFunc{clock.Real, s.now})}
	q.counts = s.seedCounts(countsPath, counts, q)
	q.groups.Store(limits.Groups)
	q.version.Store(version)
	p.queue = q
	if _, ok := sc.index.Next(); ok {
		sc.ever.Store(true)
		q.watch()
	}
	return q, nil
}

// clampFrontier checks a frontier read from its file against the log. The
// hwm file is kept at or above every frontier persisted (Persist), so a
// frontier above the high watermark is damage or a mistake: left alone it
// would hide every record committed below it. It is clamped to the high
// watermark the log recovered to when it opened — records committed since
// are new and must be delivered — logged and counted. Only a frontier the
// directory cannot vouch for opens the log.
func (s *Set) clampFrontier(k Key, frontier uint64) (uint64, error) {
	if frontier == 0 {
		return 0, nil
	}
	if st, err := s.Describe(k.Topic, k.Partition); err == nil && st.HighWatermark >= frontier {
		return frontier, nil
	}
	l, err := s.Get(k.Topic, k.Partition)
	if err != nil {
		return 0, err
	}
	if frontier <= l.HWM() {
		return frontier, nil
	}
	to := l.OpenHWM()
	s.hook.QueueError("frontier_above_hwm")
	s.log.Error("consumer frontier is above the partition's high watermark: clamped to it, so no record below it is hidden",
		"topic", k.Topic, "partition", k.Partition, "frontier", frontier, "high_watermark", l.HWM(), "clamped_to", to)
	return to, nil
}

// PeekQueue returns the queue only if it is loaded.
func (s *Set) PeekQueue(name string, partition int) *Queue {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if p, ok := s.parts[Key{name, partition}]; ok {
		return p.queue
	}
	return nil
}

// Queues lists the loaded queues.
func (s *Set) Queues() []*Queue {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*Queue, 0, len(s.parts))
	for _, p := range s.parts {
		if p.queue != nil {
			out = append(out, p.queue)
		}
	}
	return out
}

// DropQueue forgets one partition's queue and dedupe window (its log
// stays open): another leader's frontier is the one to follow now, or the
// partition's directory is being replaced.
func (s *Set) DropQueue(name string, partition int) {
	k := Key{name, partition}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.parts[k]; ok {
		if p.queue != nil {
			p.queue.closeSchedule()
		}
		p.queue, p.window = nil, nil
		s.release(k, p)
	}
}

// DropTopic forgets every queue and dedupe window of a topic (deleted).
func (s *Set) DropTopic(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, p := range s.parts {
		if k.Topic == name {
			if p.queue != nil {
				p.queue.closeSchedule()
			}
			p.queue, p.window = nil, nil
			s.release(k, p)
		}
	}
}

// Persist writes the frontier file if the frontier moved. The directory
// exists: a frontier can only move after the log was opened and read.
// The hwm file goes first, so it is never behind a durable frontier (a
// closed log's hwm file is exact already): after any crash, a frontier
// above the recorded high watermark is never a stale hwm file.
func (q *Queue) Persist() error {
	q.pmu.Lock()
	defer q.pmu.Unlock()
	f := q.Table.Frontier()
	// Records the frontier passed as scheduled were filed before it
	// moved: synced now, they are durable before the frontier is.
	if err := q.sched.index.Sync(); err != nil {
		return err
	}
	l := q.set.Peek(q.Key.Topic, q.Key.Partition)
	if l != nil && f > l.Flushed() {
		// Never past the flushed high watermark: records above it were
		// committed lazily and a power cut takes them back to the WAL, which
		// re-dispatches them — a durable frontier must not hide them. The
		// log is flushed first; if that fails the frontier is clamped to
		// what is flushed (redelivery, never a skip). A closed log flushed
		// everything.
		if l.Flush() != nil {
			f = min(f, l.Flushed())
		}
	}
	if f == q.persisted {
		return nil
	}
	if l != nil {
		if err := l.PersistHWM(f); err != nil {
			return err
		}
	}
	if err := storage.WriteOffsetFileFS(q.set.fs, q.path, f); err != nil {
		return err
	}
	q.persisted = f
	return nil
}

// Persisted is the frontier last made durable.
func (q *Queue) Persisted() uint64 {
	q.pmu.Lock()
	defer q.pmu.Unlock()
	return q.persisted
}

// Frontier reads a partition's frontier without loading its queue: from
// memory when loaded, else from the frontier file (never opening the log).
// A file that cannot be read is an error, not frontier 0: a remote child
// attached at the frontier would copy the whole retained parent again.
func (s *Set) Frontier(name string, partition int) (uint64, error) {
	if q := s.PeekQueue(name, partition); q != nil {
		return q.Table.Frontier(), nil
	}
	dir, err := s.Dir(name, partition)
	if err != nil {
		return 0, err
	}
	f, _, err := storage.ReadOffsetFileFS(s.fs, filepath.Join(dir, storage.ConsumerOffsetFile))
	return f, err
}

// clockFunc is the system clock read through the Set's Now, so a pinned
// Now reaches the lease table (which uses only Now).
type clockFunc struct {
	clock.Clock
	now func() time.Time
}

func (c clockFunc) Now() time.Time { return c.now() }
