package hosted

import (
	"sync"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/storage"
)

// The backlog gauges, narad_consumer_lag_messages and
// narad_oldest_unconsumed_message_age_seconds, exist for every partition
// this node hosts (owns, or leads when it is replicated), whether or not
// a consumer touched it since the node started: a topic nobody consumes
// is the one whose backlog an operator must see, and after a restart
// nobody has touched anything. Their figures are topic info's
// (the broker's partitionStats): the high watermark the Set describes,
// the frontier Set.Frontier reads, and the commit time of the oldest unsettled
// record. A pass on the expiry sweep's tick sets them, so a scrape reads
// gauges only; a partition no longer hosted here loses its series.
//
// A pass must stay cheap over thousands of idle partitions, so it keeps,
// per partition, what cannot have changed since it last looked:
//
//   - a closed log's description, while no log was opened since: nothing
//     writes a partition's directory without opening its log first;
//   - the frontier file's value, while the partition's queue is not
//     loaded: on the partition's owner only its loaded queue writes it;
//   - the commit time of the oldest unsettled record, until the frontier
//     or retention moves past it: a committed record never changes. A
//     closed log's is read from its directory once (storage.CommitTimeAt),
//     never by opening the log; describe uses what a pass read.
//
// All of it is forgotten when the placement changes (another owner, a new
// leader epoch, a new incarnation of the topic) or the topic is deleted.

// Backlog sets the backlog gauges of the partitions this node hosts.
type Backlog struct {
	set    *Set
	meta   *meta.Store
	m      *metrics.Metrics
	nodeID string
	now    func() time.Time

	pass sync.Mutex // one pass at a time: the pass-only fields below

	mu    sync.Mutex // parts, and every entry's from and at
	parts map[Key]*backlogPart
}

// NewBacklog builds the backlog gauges of set's partitions that the
// metastore places on nodeID.
func NewBacklog(set *Set, ms *meta.Store, m *metrics.Metrics, nodeID string, now func() time.Time) *Backlog {
	return &Backlog{set: set, meta: ms, m: m, nodeID: nodeID, now: now}
}

// backlogPart is what the passes keep of one hosted partition.
type backlogPart struct {
	incarnation, epoch uint64

	// Pass-only (under Backlog.pass).
	closed   storage.Stats // valid while closedOK and the registry's opens equal closedAt
	closedAt uint64
	closedOK bool
	file     uint64 // the frontier file, valid while fileOK
	fileOK   bool

	// Under Backlog.mu: at is the commit time of the record at from
	// (0: not known).
	from uint64
	at   int64
}

// Gauge sets both gauges for every partition hosted here and deletes
// those of partitions that are not (a pass).
func (b *Backlog) Gauge() {
	b.pass.Lock()
	defer b.pass.Unlock()
	now := b.now()
	here := map[Key]bool{}
	for _, t := range b.meta.Topics() {
		as := b.meta.Assignments(t.Name)
		for p := 0; p < t.Partitions && p < len(as); p++ {
			if as[p].Owner != b.nodeID {
				continue
			}
			k := Key{Topic: t.Name, Partition: p}
			here[k] = true
			b.gaugePartition(k, b.entry(k, t.Incarnation, as[p].LeaderEpoch), now)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.parts {
		if !here[k] {
			delete(b.parts, k)
			b.m.ConsumerLag.DeleteLabelValues(k.Topic, partLabel(k.Partition))
			b.m.OldestUnconsumed.DeleteLabelValues(k.Topic, partLabel(k.Partition))
		}
	}
}

func (b *Backlog) gaugePartition(k Key, e *backlogPart, now time.Time) {
	lbl := []string{k.Topic, partLabel(k.Partition)}
	hwm, oldest, frontier, ok := b.backlogFigures(k, e)
	if !ok {
		// Unavailable, as topic info then says: no figures to vouch for.
		b.m.ConsumerLag.DeleteLabelValues(lbl...)
		b.m.OldestUnconsumed.DeleteLabelValues(lbl...)
		return
	}
	lag := hwm - min(hwm, frontier)
	b.m.ConsumerLag.WithLabelValues(lbl...).Set(float64(lag))
	age := 0.0
	if lag > 0 {
		at := b.OldestUnsettledAt(k, e.incarnation, max(frontier, oldest), true)
		if at == 0 {
			b.m.OldestUnconsumed.DeleteLabelValues(lbl...) // unreadable: no age rather than a wrong one
			return
		}
		age = max(now.Sub(time.UnixMilli(at)).Seconds(), 0)
	}
	b.m.OldestUnconsumed.WithLabelValues(lbl...).Set(age)
}

// backlogFigures are the partition's high watermark, oldest offset and
// frontier as topic info has them, from memory where it can.
func (b *Backlog) backlogFigures(k Key, e *backlogPart) (hwm, oldest, frontier uint64, ok bool) {
	if q := b.set.PeekQueue(k.Topic, k.Partition); q != nil {
		frontier, e.fileOK = q.Table.Frontier(), false
	} else if e.fileOK {
		frontier = e.file
	} else {
		f, err := b.set.Frontier(k.Topic, k.Partition)
		if err != nil {
			return 0, 0, 0, false
		}
		frontier, e.file, e.fileOK = f, f, true
	}
	if l := b.set.Peek(k.Topic, k.Partition); l != nil {
		e.closedOK = false
		return l.HWM(), l.Oldest(), frontier, true
	}
	if e.closedOK && e.closedAt == b.set.Opens() {
		return e.closed.HighWatermark, e.closed.OldestOffset, frontier, true
	}
	opens := b.set.Opens()
	st, err := b.set.Describe(k.Topic, k.Partition)
	if err != nil {
		return 0, 0, 0, false
	}
	// Kept only if the log stayed closed throughout: one opened meanwhile
	// may have been written, and is described from memory next time.
	e.closed, e.closedAt, e.closedOK = st, opens, b.set.Peek(k.Topic, k.Partition) == nil && b.set.Opens() == opens
	return st.HighWatermark, st.OldestOffset, frontier, true
}

// oldestUnsettledAt is the commit time (unix ms) of the first readable
// record at or after from, the oldest unsettled record of a partition
// whose frontier (or oldest retained offset) is from; 0 when there is
// none or it cannot be read. An open log is read; a closed one only when
// readClosed (the pass), from its directory: describe never reads a
// closed log, it takes what a pass read.
func (b *Backlog) OldestUnsettledAt(k Key, incarnation, from uint64, readClosed bool) int64 {
	if at, ok := b.known(k, incarnation, from); ok {
		return at
	}
	var at int64
	if l := b.set.Peek(k.Topic, k.Partition); l != nil {
		at = firstCommitTime(l, from)
	} else if readClosed {
		dir, err := b.set.Dir(k.Topic, k.Partition)
		if err != nil {
			return 0
		}
		if at, err = storage.CommitTimeAt(b.set.FS(), dir, from); err != nil {
			return 0
		}
	}
	if at > 0 {
		b.remember(k, incarnation, from, at)
	}
	return at
}

// firstCommitTime reads the commit time of the first readable record at
// or after from; a damaged frame is stepped over to the next readable
// record, as a consume would.
func firstCommitTime(l *storage.Log, from uint64) int64 {
	for range 4 {
		res, err := l.Read(from, 1, 1, storage.NoDueLimit)
		if err != nil || res.Next <= from {
			return 0
		}
		if len(res.Records) > 0 {
			return res.Records[0].CommittedAt
		}
		from = res.Next
	}
	return 0
}

// entry returns the partition's entry, a fresh one if the placement or
// the topic's incarnation changed since the last pass.
func (s *Backlog) entry(k Key, incarnation, epoch uint64) *backlogPart {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.parts[k]
	if e == nil || e.incarnation != incarnation || e.epoch != epoch {
		if s.parts == nil {
			s.parts = map[Key]*backlogPart{}
		}
		e = &backlogPart{incarnation: incarnation, epoch: epoch}
		s.parts[k] = e
	}
	return e
}

func (s *Backlog) known(k Key, incarnation, from uint64) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.parts[k]
	if e == nil || e.incarnation != incarnation || e.at == 0 || e.from != from {
		return 0, false
	}
	return e.at, true
}

// remember keeps at for the partition's entry; a partition no pass has
// entered (not hosted here, or not yet) keeps nothing.
func (s *Backlog) remember(k Key, incarnation, from uint64, at int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.parts[k]; e != nil && e.incarnation == incarnation {
		e.from, e.at = from, at
	}
}

// Forget drops a deleted topic's entries.
func (s *Backlog) Forget(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.parts {
		if k.Topic == topic {
			delete(s.parts, k)
		}
	}
}
