package broker

import (
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/storage"
)

// Durable delivery counts (docs/concepts.md, "Dead letters"): the
// delivery_count of every unsettled record delivered at least once is
// kept in the partition's delivery.counts file beside consumer.offset,
// written after the frontier by the same sweep, and loaded into a new
// lease table when the queue is. A crash loses at most the counts of the
// deliveries made since the last write (countsEvery plus one frontier
// period: 600 ms by default); a clean stop (Close) and a move's freeze
// (PersistFrontier) write them whatever their age, so they lose none.
//
// The counts are advisory for at-least-once delivery: a counts file whose
// bytes do not decode (torn, damaged, foreign) never stops the partition
// — it is logged, counted in
// narad_errors_total{component="broker",kind="delivery_counts_file"},
// and the partition starts from no counts, its records then reported as
// delivered fewer times than they were. A read that fails (EIO) is not
// that: the file may be whole, and the next write would replace it with
// no counts. The queue is not loaded then (its consume answers 503) until
// the file reads. Past storage.MaxDeliveryCounts
// unsettled delivered records, the highest counts are written (those
// nearest a dead-letter policy's max_deliveries) and the rest restart at
// 1 after a restart.

// countsEvery is the least time between two writes of a partition's
// counts file by the periodic sweep: a busy partition changes its counts
// with every lease, and this caps it at two atomic writes a second.
const countsEvery = 500 * time.Millisecond

// countsState is a queue's durable-counts bookkeeping.
type countsState struct {
	mu      sync.Mutex // serialises counts writes
	path    string     // delivery.counts
	version uint64     // the lease table's counts version last written (or loaded)
	written time.Time  // when the file was last written
}

// readCounts reads the counts file of the partition in dir (before the
// queue mutex is taken: it is I/O). A file that does not decode is logged
// and counted, and the partition starts from no counts (see above); a
// read that fails is the error, and the queue is not loaded.
func (b *Broker) readCounts(topic string, p int, dir string) (path string, es []storage.CountEntry, err error) {
	path = filepath.Join(dir, storage.DeliveryCountsFile)
	es, _, err = storage.ReadDeliveryCountsFS(b.reg.fs, path)
	if err != nil {
		b.m.Errors.WithLabelValues("broker", "delivery_counts_file").Inc()
		if !errors.Is(err, storage.ErrBadCounts) {
			return path, nil, apierr.Unavailable(time.Second, "partition %d of %q cannot be read now: delivery counts: %s", p, topic, publicCause(err))
		}
		b.cfg.Logger.Error("delivery counts file unreadable: the partition starts from no delivery counts (records may report fewer deliveries than they had)",
			"topic", topic, "partition", p, "err", err)
	}
	return path, es, nil
}

// seedCounts loads es into a new queue's table (entries below its
// frontier are dropped there) and returns the queue's counts state.
func (b *Broker) seedCounts(path string, es []storage.CountEntry, table *lease.Table) countsState {
	if len(es) > 0 {
		seed := make([]lease.DeliveryCount, len(es))
		for i, e := range es {
			seed[i] = lease.DeliveryCount{Offset: e.Offset, Count: int(e.Count)}
		}
		b.m.CountsRestored.Add(float64(table.SeedDeliveries(seed)))
	}
	return countsState{path: path, version: table.CountsVersion(), written: b.cfg.Now()}
}

// persistCounts writes the counts file if the counts changed since the
// last write and, unless force, countsEvery has passed since it. Call it
// after the frontier was written (persist): entries below the frontier
// are not in the table any more, and a reader drops those of an older
// file. A failed write is logged and counted; the next sweep writes again.
func (b *Broker) persistCounts(q *queue, force bool) {
	cs := &q.counts
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.path == "" || q.table.CountsVersion() == cs.version {
		return
	}
	now := b.cfg.Now()
	if !force && now.Sub(cs.written) < countsEvery {
		return
	}
	counts, version := q.table.Deliveries(storage.MaxDeliveryCounts)
	es := make([]storage.CountEntry, len(counts))
	for i, c := range counts {
		es[i] = storage.CountEntry{Offset: c.Offset, Count: uint64(min(c.Count, storage.MaxDeliveryCount))}
	}
	if err := storage.WriteDeliveryCountsFS(b.reg.fs, cs.path, es); err != nil {
		b.m.Errors.WithLabelValues("broker", "counts_persist").Inc()
		b.cfg.Logger.Warn("delivery counts not persisted", "topic", q.key.topic, "partition", q.key.partition, "err", err)
		return
	}
	cs.version, cs.written = version, now
}

// persistAllCounts writes every loaded queue's changed counts now (Close).
func (b *Broker) persistAllCounts() {
	for _, q := range b.allQueues() {
		b.persistCounts(q, true)
	}
}
