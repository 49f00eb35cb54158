package broker

import (
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
)

// queue is the queue state of one owned partition: its lease table, the
// durable frontier and the durable delivery counts (counts.go). Only those
// two survive a crash; after a restart every record at or above the
// frontier is available again, its delivery count continuing.
type queue struct {
	key     partKey
	fs      vfs.FS
	reg     *Registry
	path    string // consumer.offset
	table   *lease.Table
	version atomic.Uint64 // topic record version the limits came from
	// recordBytes is the mean key+payload size of the records last read
	// for a consume here: how many leases a round reserves (fitting).
	recordBytes atomic.Int64

	pmu       sync.Mutex // serialises frontier writes
	persisted uint64

	counts countsState // the delivery counts file (counts.go)
}

func limitsOf(t meta.Topic) lease.Limits {
	return lease.Limits{
		VisibilityTimeout: time.Duration(t.VisibilityTimeoutMs) * time.Millisecond,
		MaxInFlight:       t.MaxInFlight,
		MaxAckedAhead:     t.MaxAckedAhead,
		MaxDeliveries:     maxDeliveriesOf(t),
	}
}

// queue returns the partition's queue, loading the frontier file lazily
// from disk the first time the partition's queue is touched, and keeping
// its limits in step with the topic record (alter is live).
func (b *Broker) queue(t meta.Topic, partition int) (*queue, error) {
	k := partKey{t.Name, partition}
	b.qmu.Lock()
	q, ok := b.queues[k]
	b.qmu.Unlock()
	if ok {
		if old := q.version.Load(); old != t.Version && q.version.CompareAndSwap(old, t.Version) {
			q.table.SetLimits(limitsOf(t))
		}
		return q, nil
	}
	dir, err := b.reg.Dir(t.Name, partition)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, storage.ConsumerOffsetFile)
	stored, _, err := storage.ReadOffsetFileFS(b.reg.fs, path)
	if err != nil {
		return nil, err
	}
	frontier, err := b.clampFrontier(t.Name, partition, stored)
	if err != nil {
		return nil, err
	}
	countsPath, counts, err := b.readCounts(t.Name, partition, dir)
	if err != nil {
		return nil, err
	}
	b.qmu.Lock()
	defer b.qmu.Unlock()
	if q, ok := b.queues[k]; ok {
		return q, nil
	}
	q = &queue{key: k, fs: b.reg.fs, reg: b.reg, path: path, persisted: stored,
		table: lease.New(partition, frontier, limitsOf(t), clockFunc{clock.Real, b.cfg.Now})}
	q.counts = b.seedCounts(countsPath, counts, q.table)
	q.version.Store(t.Version)
	b.queues[k] = q
	return q, nil
}

// clampFrontier checks a frontier read from its file against the log. The
// hwm file is kept at or above every frontier persisted (persist), so a
// frontier above the high watermark is damage or a mistake: left alone it
// would hide every record committed below it. It is clamped to the high
// watermark the log recovered to when it opened — records committed since
// are new and must be delivered — logged and counted. Only a frontier the
// directory cannot vouch for opens the log.
func (b *Broker) clampFrontier(topic string, p int, frontier uint64) (uint64, error) {
	if frontier == 0 {
		return 0, nil
	}
	if st, err := b.reg.Describe(topic, p); err == nil && st.HighWatermark >= frontier {
		return frontier, nil
	}
	l, err := b.reg.Get(topic, p)
	if err != nil {
		return 0, err
	}
	if frontier <= l.HWM() {
		return frontier, nil
	}
	to := l.OpenHWM()
	b.m.Errors.WithLabelValues("broker", "frontier_above_hwm").Inc()
	b.cfg.Logger.Error("consumer frontier is above the partition's high watermark: clamped to it, so no record below it is hidden",
		"topic", topic, "partition", p, "frontier", frontier, "high_watermark", l.HWM(), "clamped_to", to)
	return to, nil
}

// peekQueue returns the queue only if it is loaded.
func (b *Broker) peekQueue(topic string, partition int) *queue {
	b.qmu.Lock()
	defer b.qmu.Unlock()
	return b.queues[partKey{topic, partition}]
}

func (b *Broker) allQueues() []*queue {
	b.qmu.Lock()
	defer b.qmu.Unlock()
	out := make([]*queue, 0, len(b.queues))
	for _, q := range b.queues {
		out = append(out, q)
	}
	return out
}

func (b *Broker) dropQueues(topic string) {
	b.qmu.Lock()
	for k := range b.queues {
		if k.topic == topic {
			delete(b.queues, k)
		}
	}
	b.qmu.Unlock()
	b.tmu.Lock()
	delete(b.topics, topic)
	b.tmu.Unlock()
	b.backlog.forget(topic)
}

// persist writes the frontier file if the frontier moved. The directory
// exists: a frontier can only move after the log was opened and read.
// The hwm file goes first, so it is never behind a durable frontier (a
// closed log's hwm file is exact already): after any crash, a frontier
// above the recorded high watermark is never a stale hwm file.
func (q *queue) persist() error {
	q.pmu.Lock()
	defer q.pmu.Unlock()
	f := q.table.Frontier()
	l := q.reg.Peek(q.key.topic, q.key.partition)
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
	if err := storage.WriteOffsetFileFS(q.fs, q.path, f); err != nil {
		return err
	}
	q.persisted = f
	return nil
}

// frontierOf reads a partition's frontier without loading its queue: from
// memory when loaded, else from the frontier file (never opening the log).
// A file that cannot be read is an error, not frontier 0: a remote child
// attached at the frontier would copy the whole retained parent again.
func (b *Broker) frontierOf(topic string, partition int) (uint64, error) {
	if q := b.peekQueue(topic, partition); q != nil {
		return q.table.Frontier(), nil
	}
	dir, err := b.reg.Dir(topic, partition)
	if err != nil {
		return 0, err
	}
	f, _, err := storage.ReadOffsetFileFS(b.reg.fs, filepath.Join(dir, storage.ConsumerOffsetFile))
	return f, err
}

// clockFunc is the system clock read through the broker's Now, so a pinned
// Now reaches the lease table (which uses only Now).
type clockFunc struct {
	clock.Clock
	now func() time.Time
}

func (c clockFunc) Now() time.Time { return c.now() }

func partLabel(p int) string { return strconv.Itoa(p) }
