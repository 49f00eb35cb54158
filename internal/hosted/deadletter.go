package hosted

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/schedule"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
)

// The dead-letter hand-off (docs/concepts.md, "Dead letters").
//
// A lease table holds a record whose deliveries are used up instead of
// offering it again (lease/dead.go). The dead-letter pass, one loop of
// the broker (DeadLetters.Pass), takes the held records of every queue here, commits each to
// the topic's dead-letter topic through the commit seam — the local
// commit when this node owns the dead-letter partition, node RPC to its
// owner otherwise (Config.Remote), placed by key like produce — and only
// once that commit returned settles it on the source:
//
//	commit before settle: a record is settled here only after its
//	dead-letter copy is durable in the dead-letter topic.
//
// A crash between the two loses the settle (the frontier file has not
// moved past the record), so the record is dead-lettered again after the
// restart: a duplicate in the dead-letter topic, never a loss. It is the
// fan-out engine's commit-before-advance (internal/fanout doc.go), with
// the frontier in the cursor's place.
//
// Why the commit seam and not the ingress WAL: the WAL would answer
// before the copy is in the dead-letter topic (dispatch commits it later,
// and may discard it on a deleted topic), so "settle after commit" would
// become "settle after accept", and the dead-letter topic's refusals
// (frozen, fenced, disk full, owner down) would surface nowhere. Through
// the seam, a dead-letter owner that cannot take the commit leaves the
// record held (unsettled, never offered) and retried with backoff on the
// node's clock; the other records of the partition and every other
// partition go on.

// Committer commits records to a partition another node owns (node RPC;
// route.Committer's shape). Declared here so the hosted partitions need
// nothing of the route package.
type Committer interface {
	Commit(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record) error
}

// Dead-letter headers (docs/concepts.md, "Dead letters"): where the record
// came from and why it was dead-lettered.
const (
	HeaderDLQTopic         = "narad-dlq-topic"
	HeaderDLQPartition     = "narad-dlq-partition"
	HeaderDLQOffset        = "narad-dlq-offset"
	HeaderDLQDeliveryCount = "narad-dlq-delivery-count"
	HeaderDLQReason        = "narad-dlq-reason"
	// HeaderDLQMsgID keeps a dead-lettered record's producer id
	// (header.MsgID) under a name no deduplication window reads: the copy
	// is not a retry of a produce, and a window in the dead-letter topic
	// (or, after a redrive, in the source, which still remembers the id)
	// would otherwise drop it as one, after its original was settled.
	HeaderDLQMsgID = "narad-dlq-msg-id"
	// HeaderDLQPrefix starts every dead-letter header (redrive drops them).
	HeaderDLQPrefix = "narad-dlq-"
)

const (
	deadLetterBatch      = 256              // held records taken per queue per pass
	deadLetterCommitWait = 10 * time.Second // one dead-letter commit's budget
	deadLetterBackoffMin = 250 * time.Millisecond
	deadLetterBackoffMax = 30 * time.Second
)

// DeadLetterBackoff is the wait after the n-th failed commit (n >= 1):
// 250 ms doubling to 30 s.
func DeadLetterBackoff(n int) time.Duration {
	d := deadLetterBackoffMin
	for i := 1; i < n && d < deadLetterBackoffMax; i++ {
		d *= 2
	}
	return min(d, deadLetterBackoffMax)
}

// deadLetterRecord is the copy of src committed to the dead-letter topic:
// the same key, payload and headers (copied: src may alias the log's
// frames), plus the narad-dlq-* headers saying where it came from and
// why. A record dead-lettered a second time (out of a dead-letter topic
// with a policy of its own) has its old narad-dlq-* headers replaced. A
// producer id moves to HeaderDLQMsgID (see there).
func deadLetterRecord(src storage.Record, topic string, p int, d lease.Dead) storage.Record {
	kept := header.Without(header.Without(src.Headers, HeaderDLQPrefix), header.MsgID)
	hs := make([]header.Header, 0, len(kept)+6)
	hs = append(hs, kept...)
	if id, ok := header.MsgIDOf(src.Headers); ok {
		hs = append(hs, header.Header{Name: HeaderDLQMsgID, Value: id})
	}
	hs = append(hs,
		header.Header{Name: HeaderDLQTopic, Value: topic},
		header.Header{Name: HeaderDLQPartition, Value: strconv.Itoa(p)},
		header.Header{Name: HeaderDLQOffset, Value: strconv.FormatUint(d.Offset, 10)},
		header.Header{Name: HeaderDLQDeliveryCount, Value: strconv.Itoa(d.DeliveryCount)},
		header.Header{Name: HeaderDLQReason, Value: string(d.Reason)},
	)
	header.Sort(hs)
	return storage.Record{Key: bytes.Clone(src.Key), Payload: bytes.Clone(src.Payload), Headers: hs}
}

// DeadLetters hands held records to their dead-letter topics.
type DeadLetters struct {
	set    *Set
	meta   *meta.Store
	m      *metrics.Metrics
	nodeID string
	now    func() time.Time
	log    *slog.Logger
	// local commits into a partition this node owns (the broker's
	// Commit); remote into one another node owns (nil: none can).
	local  func(ctx context.Context, topic string, incarnation uint64, p int, recs []storage.Record) error
	remote Committer
	// rotate is the topic's round-robin counter of keyless placements,
	// shared with produce; wake fires a topic's broadcast.
	rotate func(topic string) uint64
	wake   func(topic string)
}

// DeadLettersConfig is what the hand-off needs besides the partitions.
type DeadLettersConfig struct {
	NodeID string
	Now    func() time.Time
	Logger *slog.Logger
	Local  func(ctx context.Context, topic string, incarnation uint64, p int, recs []storage.Record) error
	Remote Committer
	Rotate func(topic string) uint64
	Wake   func(topic string)
}

// NewDeadLetters builds the hand-off of set's held records.
func NewDeadLetters(set *Set, ms *meta.Store, m *metrics.Metrics, cfg DeadLettersConfig) *DeadLetters {
	return &DeadLetters{set: set, meta: ms, m: m, nodeID: cfg.NodeID, now: cfg.Now, log: cfg.Logger,
		local: cfg.Local, remote: cfg.Remote, rotate: cfg.Rotate, wake: cfg.Wake}
}

// Pass hands every due held record of every queue here to its
// dead-letter topic. One goroutine runs it (the broker loop); ctx ends it
// at Close.
func (b *DeadLetters) Pass(ctx context.Context) {
	for _, q := range b.set.Queues() {
		if ctx.Err() != nil {
			return
		}
		if q.Table.DeadCount() > 0 {
			b.deadLetterQueue(ctx, q, tableHolds{q.Table, q})
		}
		if q.sched.Due.DeadCount() > 0 {
			b.deadLetterQueue(ctx, q, dueHolds{q.sched.Due, q})
		}
	}
}

// heldRecord is a held record read back, bound for one dead-letter partition.
type heldRecord struct {
	dead lease.Dead
	rec  storage.Record
}

func (b *DeadLetters) deadLetterQueue(ctx context.Context, q *Queue, h holds) {
	t, ok := b.meta.Topic(q.Key.Topic)
	if !ok {
		return // deleted: its queues go with it
	}
	if _, on := DeadLetterOf(t); !on {
		// The policy was turned off before these were committed: they
		// are ordinary unsettled records again.
		h.SetLimits(LimitsOf(t))
		if h.ReviveDead() > 0 {
			b.wake(t.Name)
		}
		return
	}
	due := h.DueDead(deadLetterBatch)
	if len(due) == 0 {
		return
	}
	dlq, err := b.deadLetterTarget(t)
	if err != nil {
		b.deferDead(q, h, t.Name, due, err)
		return
	}
	l, err := b.set.Get(t.Name, q.Key.Partition)
	if err != nil {
		b.deferDead(q, h, t.Name, due, err)
		return
	}
	groups := map[int][]heldRecord{}
	var order []int
	for _, d := range due {
		r, err := b.readHeld(h, l, d.Offset)
		if err != nil {
			b.deferDead(q, h, t.Name, []lease.Dead{d}, err)
			continue
		}
		if r == nil {
			continue // settled by retention or as unreadable meanwhile
		}
		dp := b.deadLetterPartition(dlq, r.Key)
		if _, seen := groups[dp]; !seen {
			order = append(order, dp)
		}
		groups[dp] = append(groups[dp], heldRecord{dead: d, rec: deadLetterRecord(*r, t.Name, q.Key.Partition, d)})
	}
	settled := 0
	for _, dp := range order {
		held := groups[dp]
		recs := make([]storage.Record, len(held))
		for i, h := range held {
			recs[i] = h.rec
		}
		cctx, cancel := context.WithTimeout(ctx, deadLetterCommitWait)
		err := b.commitDeadLetter(cctx, dlq, dp, recs)
		cancel()
		if err != nil {
			ds := make([]lease.Dead, len(held))
			for i, h := range held {
				ds[i] = h.dead
			}
			b.deferDead(q, h, t.Name, ds, err)
			continue
		}
		// Committed and durable in the dead-letter topic: only now settle.
		crashpoint("deadletter-before-settle")
		for _, x := range held {
			if h.settleDead(x.dead.Offset) {
				settled++
			}
		}
	}
	if settled > 0 {
		b.m.DeadLettered.WithLabelValues(t.Name).Add(float64(settled))
		if h.TakeFreed() {
			b.wake(t.Name) // capacity again: wake consumers held back by a cap
		}
	}
}

// holds is a table of records held for the dead-letter topic: a queue's
// lease table, or its due table (scheduled records delivered after they
// fell due). The hand-off is the same for both.
type holds interface {
	DeadCount() int
	DueDead(n int) []lease.Dead
	DeferDead(x uint64, until time.Time) bool
	SetLimits(lease.Limits)
	ReviveDead() int
	TakeFreed() bool
	// settleDead settles a held record committed to the dead-letter
	// topic, and says whether it was still held.
	settleDead(x uint64) bool
	// goneBelow: retention deleted every record below oldest.
	goneBelow(oldest uint64)
	// goneUnreadable: x's frame can never be read.
	goneUnreadable(x uint64)
}

type tableHolds struct {
	*lease.Table
	q *Queue
}

// SetLimits sets the whole queue's limits, the group mode with them.
func (t tableHolds) SetLimits(l lease.Limits) { t.q.setLimits(l) }

func (t tableHolds) settleDead(x uint64) bool { return t.SettleDead(x) == nil }
func (t tableHolds) goneBelow(oldest uint64)  { t.AdvanceTo(oldest) }
func (t tableHolds) goneUnreadable(x uint64)  { t.MarkSkipped(x, x+1) }

type dueHolds struct {
	*lease.Due
	q *Queue
}

func (d dueHolds) settleDead(x uint64) bool {
	due, err := d.SettleDead(x)
	if err == nil {
		d.q.sched.index.Settle(schedule.Entry{Offset: x, Due: due})
	}
	return err == nil
}

func (d dueHolds) goneBelow(oldest uint64) {
	for _, x := range d.Offsets() {
		if x < oldest {
			d.q.dropDue(x)
		}
	}
}

func (d dueHolds) goneUnreadable(x uint64) { d.q.dropDue(x) }

// deadLetterTarget is t's dead-letter topic, fit to commit to.
func (b *DeadLetters) deadLetterTarget(t meta.Topic) (meta.Topic, error) {
	d, ok := b.meta.Topic(t.DeadLetterTopic)
	switch {
	case !ok:
		// The metastore refuses to delete a topic named as one, so this is
		// a replica that has not applied its create yet.
		return meta.Topic{}, refusal.New(refusal.ErrUnavailable, time.Second, "dead-letter topic %q of %q is not known here yet", t.DeadLetterTopic, t.Name)
	case d.Remote != nil || d.Partitions < 1:
		return meta.Topic{}, refusal.New(refusal.ErrUnavailable, time.Second, "dead-letter topic %q of %q has no partitions here", d.Name, t.Name)
	}
	return d, nil
}

// readHeld reads the held record at offset. nil, nil: there is none to
// dead-letter any more — retention deleted it, or its frame can never be
// read (settled here as skipped, the recorded loss the consume path makes
// too).
func (b *DeadLetters) readHeld(h holds, l *storage.Log, offset uint64) (*storage.Record, error) {
	res, err := l.Read(offset, 1, maxRecordBytes, storage.NoDueLimit)
	var below *storage.BelowOldestError
	switch {
	case errors.As(err, &below):
		h.goneBelow(below.Oldest)
		return nil, nil
	case err != nil:
		return nil, err
	case len(res.Records) > 0 && res.Records[0].Offset == offset:
		return &res.Records[0], nil
	case res.Skipped > 0 && res.SkippedFrom <= offset && offset < res.SkippedFrom+res.Skipped:
		h.goneUnreadable(offset)
		return nil, nil
	}
	return nil, errors.New("record not found where the lease table holds it")
}

// deadLetterPartition places a dead-letter copy as produce places a
// record: by its key's hash, or round robin when it has none.
func (b *DeadLetters) deadLetterPartition(dlq meta.Topic, key []byte) int {
	if len(key) > 0 {
		return topic.KeyPartition(key, dlq.Partitions)
	}
	return int(b.rotate(dlq.Name) % uint64(dlq.Partitions))
}

// commitDeadLetter commits to the dead-letter partition's owner: here, or
// by node RPC.
func (b *DeadLetters) commitDeadLetter(ctx context.Context, dlq meta.Topic, p int, recs []storage.Record) error {
	if owner, ok := b.meta.Owner(dlq.Name, p); ok && owner != b.nodeID {
		if b.remote == nil {
			return refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q is owned by %q, and this node has no cluster transport", p, dlq.Name, owner)
		}
		return b.remote.Commit(ctx, dlq.Name, dlq.Incarnation, p, recs)
	}
	return b.local(ctx, dlq.Name, dlq.Incarnation, p, recs)
}

// deferDead leaves held records unsettled after a failed commit, retried
// after a backoff; only they wait.
func (b *DeadLetters) deferDead(q *Queue, h holds, topic string, ds []lease.Dead, err error) {
	now := b.now()
	for _, d := range ds {
		h.DeferDead(d.Offset, now.Add(DeadLetterBackoff(d.Attempts+1)))
	}
	b.m.Errors.WithLabelValues("broker", "dead_letter").Inc()
	b.log.Warn("dead-letter commit failed: the records stay unsettled here and are retried",
		"topic", topic, "partition", q.Key.Partition, "records", len(ds), "next_in", DeadLetterBackoff(ds[0].Attempts+1), "err", err)
}

// maxRecordBytes bounds one held record's read: a payload of 1 MiB and a
// key of 4 KiB at most (the produce limits).
const maxRecordBytes = 1<<20 + 4<<10

// DeadLetterOf is t's dead-letter topic, and whether its policy is on.
func DeadLetterOf(t meta.Topic) (string, bool) {
	return t.DeadLetterTopic, t.MaxDeliveries > 0 && t.DeadLetterTopic != ""
}

// LimitsOf are the lease limits of t's queues.
func LimitsOf(t meta.Topic) lease.Limits {
	maxDeliveries := 0
	if _, on := DeadLetterOf(t); on {
		maxDeliveries = t.MaxDeliveries
	}
	return lease.Limits{
		VisibilityTimeout: time.Duration(t.VisibilityTimeoutMs) * time.Millisecond,
		MaxInFlight:       t.MaxInFlight,
		MaxAckedAhead:     t.MaxAckedAhead,
		MaxDeliveries:     maxDeliveries,
		Groups:            t.Ordering == meta.OrderingGroup,
	}
}
