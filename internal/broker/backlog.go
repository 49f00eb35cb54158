package broker

import (
	"sync"
	"time"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/storage"
)

// The backlog gauges, narad_consumer_lag_messages and
// narad_oldest_unconsumed_message_age_seconds, exist for every partition
// this node hosts (owns, or leads when it is replicated), whether or not
// a consumer touched it since the node started: a topic nobody consumes
// is the one whose backlog an operator must see, and after a restart
// nobody has touched anything. Their figures are topic info's
// (partitionStats): the high watermark the registry describes, the
// frontier frontierOf reads, and the commit time of the oldest unsettled
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

type backlogState struct {
	pass sync.Mutex // one pass at a time: the pass-only fields below

	mu    sync.Mutex // parts, and every entry's from and at
	parts map[hosted.Key]*backlogPart
}

// backlogPart is what the passes keep of one hosted partition.
type backlogPart struct {
	incarnation, epoch uint64

	// Pass-only (under backlogState.pass).
	closed   storage.Stats // valid while closedOK and the registry's opens equal closedAt
	closedAt uint64
	closedOK bool
	file     uint64 // the frontier file, valid while fileOK
	fileOK   bool

	// Under backlogState.mu: at is the commit time of the record at from
	// (0: not known).
	from uint64
	at   int64
}

// gaugeBacklog sets both gauges for every partition hosted here and
// deletes those of partitions that are not.
func (b *Broker) gaugeBacklog() {
	b.backlog.pass.Lock()
	defer b.backlog.pass.Unlock()
	now := b.cfg.Now()
	here := map[hosted.Key]bool{}
	for _, t := range b.meta.Topics() {
		as := b.meta.Assignments(t.Name)
		for p := 0; p < t.Partitions && p < len(as); p++ {
			if as[p].Owner != b.cfg.NodeID {
				continue
			}
			k := hosted.Key{Topic: t.Name, Partition: p}
			here[k] = true
			b.gaugePartition(k, b.backlog.entry(k, t.Incarnation, as[p].LeaderEpoch), now)
		}
	}
	b.backlog.mu.Lock()
	defer b.backlog.mu.Unlock()
	for k := range b.backlog.parts {
		if !here[k] {
			delete(b.backlog.parts, k)
			b.m.ConsumerLag.DeleteLabelValues(k.Topic, partLabel(k.Partition))
			b.m.OldestUnconsumed.DeleteLabelValues(k.Topic, partLabel(k.Partition))
		}
	}
}

func (b *Broker) gaugePartition(k hosted.Key, e *backlogPart, now time.Time) {
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
		at := b.oldestUnsettledAt(k, e.incarnation, max(frontier, oldest), true)
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
func (b *Broker) backlogFigures(k hosted.Key, e *backlogPart) (hwm, oldest, frontier uint64, ok bool) {
	if q := b.parts.PeekQueue(k.Topic, k.Partition); q != nil {
		frontier, e.fileOK = q.Table.Frontier(), false
	} else if e.fileOK {
		frontier = e.file
	} else {
		f, err := b.parts.Frontier(k.Topic, k.Partition)
		if err != nil {
			return 0, 0, 0, false
		}
		frontier, e.file, e.fileOK = f, f, true
	}
	if l := b.parts.Peek(k.Topic, k.Partition); l != nil {
		e.closedOK = false
		return l.HWM(), l.Oldest(), frontier, true
	}
	if e.closedOK && e.closedAt == b.parts.Opens() {
		return e.closed.HighWatermark, e.closed.OldestOffset, frontier, true
	}
	opens := b.parts.Opens()
	st, err := b.parts.Describe(k.Topic, k.Partition)
	if err != nil {
		return 0, 0, 0, false
	}
	// Kept only if the log stayed closed throughout: one opened meanwhile
	// may have been written, and is described from memory next time.
	e.closed, e.closedAt, e.closedOK = st, opens, b.parts.Peek(k.Topic, k.Partition) == nil && b.parts.Opens() == opens
	return st.HighWatermark, st.OldestOffset, frontier, true
}

// oldestUnsettledAt is the commit time (unix ms) of the first readable
// record at or after from, the oldest unsettled record of a partition
// whose frontier (or oldest retained offset) is from; 0 when there is
// none or it cannot be read. An open log is read; a closed one only when
// readClosed (the pass), from its directory: describe never reads a
// closed log, it takes what a pass read.
func (b *Broker) oldestUnsettledAt(k hosted.Key, incarnation, from uint64, readClosed bool) int64 {
	if at, ok := b.backlog.known(k, incarnation, from); ok {
		return at
	}
	var at int64
	if l := b.parts.Peek(k.Topic, k.Partition); l != nil {
		at = firstCommitTime(l, from)
	} else if readClosed {
		dir, err := b.parts.Dir(k.Topic, k.Partition)
		if err != nil {
			return 0
		}
		if at, err = storage.CommitTimeAt(b.parts.FS(), dir, from); err != nil {
			return 0
		}
	}
	if at > 0 {
		b.backlog.remember(k, incarnation, from, at)
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
func (s *backlogState) entry(k hosted.Key, incarnation, epoch uint64) *backlogPart {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.parts[k]
	if e == nil || e.incarnation != incarnation || e.epoch != epoch {
		if s.parts == nil {
			s.parts = map[hosted.Key]*backlogPart{}
		}
		e = &backlogPart{incarnation: incarnation, epoch: epoch}
		s.parts[k] = e
	}
	return e
}

func (s *backlogState) known(k hosted.Key, incarnation, from uint64) (int64, bool) {
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
func (s *backlogState) remember(k hosted.Key, incarnation, from uint64, at int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.parts[k]; e != nil && e.incarnation == incarnation {
		e.from, e.at = from, at
	}
}

// forget drops a deleted topic's entries.
func (s *backlogState) forget(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.parts {
		if k.Topic == topic {
			delete(s.parts, k)
		}
	}
}
