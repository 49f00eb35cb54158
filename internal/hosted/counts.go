package hosted

import (
	"cmp"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// Durable delivery counts (docs/concepts.md, "Dead letters"): the
// delivery_count of every unsettled record delivered at least once is
// kept in the partition's delivery.counts file beside consumer.offset,
// written after the frontier by the same sweep, and loaded into a new
// lease table when the queue is. A crash loses at most the counts of the
// deliveries made since the last write (CountsEvery plus one frontier
// period: 600 ms by default); a clean stop and a move's freeze write them
// whatever their age, so they lose none.
//
// The counts are advisory for at-least-once delivery: a counts file whose
// bytes do not decode (torn, damaged, foreign) never stops the partition
// — it is logged, counted in
// narad_errors_total{component="broker",kind="delivery_counts_file"},
// and the partition starts from no counts, its records then reported as
// delivered fewer times than they were. A read that fails (EIO) is not
// that: the file may be whole, and the next write would replace it with
// no counts. The queue is not loaded then (its consume answers 503) until
// the file reads. Past storage.MaxDeliveryCounts unsettled delivered
// records, the highest counts are written (those nearest a dead-letter
// policy's max_deliveries) and the rest restart at 1 after a restart.

// CountsEvery is the least time between two writes of a partition's
// counts file by the periodic sweep: a busy partition changes its counts
// with every lease, and this caps it at two atomic writes a second.
const CountsEvery = 500 * time.Millisecond

// countsState is a queue's durable-counts bookkeeping.
type countsState struct {
	mu      sync.Mutex // serialises counts writes
	path    string     // delivery.counts
	version uint64     // the lease table's counts version last written (or loaded)
	written time.Time  // when the file was last written
}

// readCounts reads the counts file of the partition in dir (before the
// Set's lock is taken: it is I/O). A file that does not decode is logged
// and counted, and the partition starts from no counts (see above); a
// read that fails is the error, and the queue is not loaded.
func (s *Set) readCounts(k Key, dir string) (path string, es []storage.CountEntry, err error) {
	path = filepath.Join(dir, storage.DeliveryCountsFile)
	es, _, err = storage.ReadDeliveryCountsFS(s.fs, path)
	if err != nil {
		s.hook.QueueError("delivery_counts_file")
		if !errors.Is(err, storage.ErrBadCounts) {
			return path, nil, refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q cannot be read now: delivery counts: %s", k.Partition, k.Topic, PublicCause(err))
		}
		s.log.Error("delivery counts file unreadable: the partition starts from no delivery counts (records may report fewer deliveries than they had)",
			"topic", k.Topic, "partition", k.Partition, "err", err)
	}
	return path, es, nil
}

// seedCounts loads es into a new queue's tables and returns the queue's
// counts state. The lease table takes the entries at or above its
// frontier; the due table those below it, which can only be scheduled
// records (scheduled.go), for when they fall due.
func (s *Set) seedCounts(path string, es []storage.CountEntry, q *Queue) countsState {
	if len(es) > 0 {
		frontier := q.Table.Frontier()
		var seed, due []lease.DeliveryCount
		for _, e := range es {
			c := lease.DeliveryCount{Offset: e.Offset, Count: int(e.Count)}
			if e.Offset < frontier {
				due = append(due, c)
			} else {
				seed = append(seed, c)
			}
		}
		s.hook.CountsRestored(q.Table.SeedDeliveries(seed) + q.sched.Due.SeedDeliveries(due))
	}
	return countsState{path: path, version: q.countsVersion(), written: s.now()}
}

// countsVersion moves whenever a delivery count of either table does.
func (q *Queue) countsVersion() uint64 {
	return q.Table.CountsVersion() + q.sched.Due.CountsVersion()
}

// PersistCounts writes the counts file if the counts changed since the
// last write and, unless force, CountsEvery has passed since it. Call it
// after the frontier was written (Persist): entries below the frontier
// are not in the table any more, and a reader drops those of an older
// file. A failed write is logged and counted; the next sweep writes again.
func (q *Queue) PersistCounts(force bool) {
	cs := &q.counts
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.path == "" || q.countsVersion() == cs.version {
		return
	}
	now := q.set.now()
	if !force && now.Sub(cs.written) < CountsEvery {
		return
	}
	es, version := q.CountEntries()
	if err := storage.WriteDeliveryCountsFS(q.set.fs, cs.path, es); err != nil {
		q.set.hook.QueueError("counts_persist")
		q.set.log.Warn("delivery counts not persisted", "topic", q.Key.Topic, "partition", q.Key.Partition, "err", err)
		return
	}
	cs.version, cs.written = version, now
}

// CountEntries are the table's delivery counts as the counts file holds
// them (the highest storage.MaxDeliveryCounts), and the counts version
// they are of.
func (q *Queue) CountEntries() ([]storage.CountEntry, uint64) {
	counts, version := q.Table.Deliveries(storage.MaxDeliveryCounts)
	if due, dv := q.sched.Due.Deliveries(); len(due) > 0 || dv > 0 {
		// The two tables hold different offsets: the due table's were
		// settled in the lease table when they were filed.
		counts = append(counts, due...)
		version += dv
		slices.SortFunc(counts, func(a, b lease.DeliveryCount) int { return cmp.Compare(a.Offset, b.Offset) })
		if len(counts) > storage.MaxDeliveryCounts {
			counts = counts[:storage.MaxDeliveryCounts]
		}
	}
	es := make([]storage.CountEntry, len(counts))
	for i, c := range counts {
		es[i] = storage.CountEntry{Offset: c.Offset, Count: uint64(min(c.Count, storage.MaxDeliveryCount))}
	}
	return es, version
}

// PersistAllCounts writes every loaded queue's changed counts now,
// whatever their age (a clean stop: Close loses no delivery count).
func (s *Set) PersistAllCounts() {
	for _, q := range s.Queues() {
		q.PersistCounts(true)
	}
}
