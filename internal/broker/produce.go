package broker

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/messageid"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// Produce bounds (docs/http-api.md).
const (
	MaxPayloadBytes  = 1 << 20
	MaxBatchRecords  = 10_000
	MaxBatchBodySize = 16 << 20
	// MaxKeyBytes bounds a record key (docs/concepts.md, "Records").
	MaxKeyBytes = 4 << 10
)

// ProduceRecord is one record a client asks to produce. An empty Key is
// keyless (the log format cannot tell "" from no key, and no key is ever
// invented).
type ProduceRecord struct {
	Key       []byte
	Partition *int
	Payload   []byte
	// Headers are checked (header.Check) and sorted in place by produce;
	// from a client, names beginning "narad-" are refused.
	Headers []header.Header
	// MsgID is the producer id (docs/concepts.md, "Producer ids and
	// deduplication"), given when HasMsgID (so that an empty one is refused,
	// not ignored). Produce stores it as the reserved header header.MsgID; a
	// keyless record with one is placed by its hash.
	MsgID    string
	HasMsgID bool
	// Delay or DeliverAt (Unix ms) schedule the record (docs/concepts.md,
	// "Scheduled delivery"); at most one. Neither: the topic's
	// delivery_delay. A DeliverAt in the past means now.
	Delay     *time.Duration
	DeliverAt *int64
	// AWS is the SQS/SNS edge's account of the record (package awsattr),
	// stored as the reserved header header.AWS; empty: none. The /v1
	// decoders never set it, so only that edge can.
	AWS string
}

// Accepted says what produce made of one record: its message id (package
// messageid; docs/concepts.md, "Message ids") and its partition. Its
// offset is not known yet: the dispatcher commits it later.
type Accepted struct {
	ID        string
	Partition int
}

// Produce accepts one record: durable in the ingress WAL when it returns.
func (b *Broker) Produce(ctx context.Context, topic string, rec ProduceRecord) error {
	_, err := b.ProduceWithID(ctx, topic, rec)
	return err
}

// ProduceWithID is Produce that says what it accepted.
func (b *Broker) ProduceWithID(ctx context.Context, topic string, rec ProduceRecord) (Accepted, error) {
	acc, err := b.produce(ctx, topic, []ProduceRecord{rec}, false, header.Client)
	if err != nil {
		return Accepted{}, err
	}
	return acc[0], nil
}

// ProduceReserved is ProduceBatch for the broker's own records: their
// headers may use the reserved "narad-" names (and the broker's allowance
// over the client caps). It is the one way such headers enter the
// produce path; the HTTP edge has no route to it (its Broker interface
// does not name it), so a client can never set one.
func (b *Broker) ProduceReserved(ctx context.Context, topic string, recs []ProduceRecord) error {
	_, err := b.produce(ctx, topic, recs, true, header.Reserved)
	return err
}

// ProduceBatch validates every record first — any failure refuses the
// whole request, names the first failing index and stores nothing — then
// appends all of them to the ingress WAL and returns once they are durable.
// The dispatcher commits them into their partition logs.
func (b *Broker) ProduceBatch(ctx context.Context, topic string, recs []ProduceRecord) error {
	_, err := b.ProduceBatchWithIDs(ctx, topic, recs)
	return err
}

// ProduceBatchWithIDs is ProduceBatch that says what it accepted, one
// Accepted per record in request order.
func (b *Broker) ProduceBatchWithIDs(ctx context.Context, topic string, recs []ProduceRecord) ([]Accepted, error) {
	return b.produce(ctx, topic, recs, true, header.Client)
}

func (b *Broker) produce(ctx context.Context, topic string, recs []ProduceRecord, indexed bool, src header.Source) ([]Accepted, error) {
	t, schemaOf, err := b.produceTarget(topic)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, refusal.New(refusal.ErrInvalid, 0, "no records")
	}
	if len(recs) > MaxBatchRecords {
		reject(b.m, topic, "too_large")
		return nil, refusal.New(refusal.ErrTooLarge, 0, "batch of %d records is over the cap of %d", len(recs), MaxBatchRecords)
	}
	if err := b.validateRecords(t, schemaOf, recs, indexed, src); err != nil {
		return nil, err
	}
	if b.diskFull() {
		reject(b.m, topic, "disk_full")
		return nil, errDiskFull
	}
	ts := b.topicState(topic)
	nowT := b.cfg.Now()
	now := nowT.UnixMilli()
	wrecs := make([]wal.Record, len(recs))
	keyless := 0 // records placed in turn (nextPartition), marked Partition -1 until then
	for i, r := range recs {
		if r.HasMsgID {
			r.Headers = header.WithMsgID(r.Headers, r.MsgID)
		}
		if r.AWS != "" {
			r.Headers = header.WithAWS(r.Headers, r.AWS)
		}
		schedule(t, &r, nowT)
		id, hasID := header.MsgIDOf(r.Headers)
		p := 0
		switch {
		case r.Partition != nil:
			p = *r.Partition
		case len(r.Key) > 0:
			p = KeyPartition(r.Key, t.Partitions)
		case hasID: // a retry of a keyless record lands where the first try did
			p = KeyPartition([]byte(id), t.Partitions)
		default:
			p = -1
			keyless++
		}
		wrecs[i] = wal.Record{Topic: topic, Key: r.Key, Partition: int32(p), Payload: r.Payload, AcceptedAt: now,
			Incarnation: t.Incarnation, Headers: r.Headers}
	}
	var placed []bool // the keyless records, which may move (commitPlaced)
	if keyless > 0 {
		p := int32(b.nextPartition(t, ts, keyless, nowT))
		placed = make([]bool, len(wrecs))
		for i := range wrecs {
			if wrecs[i].Partition < 0 {
				wrecs[i].Partition, placed[i] = p, true
			}
		}
	}
	if t.ReplicationFactor > 1 {
		// Not through the ingress WAL: it would answer before a majority
		// of the replicas holds the records (replicated_produce.go).
		acc, err := b.commitReplicated(ctx, t, wrecs, placed)
		if err != nil {
			return nil, err
		}
		countProduced(b.m, topic, wrecs)
		return acc, nil
	}
	if err := b.wal.Append(ctx, wrecs); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		if errors.Is(err, wal.ErrNoSpace) && b.cfg.Disk != nil {
			b.cfg.Disk.Check() // release the reserve now, not at the next poll
		}
		return nil, ingressErr(err)
	}
	countProduced(b.m, topic, wrecs)
	// The WAL gave each record its seq: with the WAL's identity, its id
	// (the partition log keeps both, package storage's frame ids).
	origin := b.wal.Identity()
	acc := make([]Accepted, len(wrecs))
	for i := range wrecs {
		acc[i] = Accepted{ID: messageid.FromWAL(origin, wrecs[i].Seq), Partition: int(wrecs[i].Partition)}
	}
	return acc, nil
}

// keylessRun is how many records with no key, partition or msg_id a node
// places on one partition in a row before its rotation moves to the next
// (nextPartition).
const keylessRun = 64

// nextPartition places the n records of one request that have no key,
// partition or msg_id, all on one partition (one commit, on one leader):
// the partition whose turn it is. A turn lasts keylessRun such records
// through this node, so produces that arrive together share a partition
// and with it one commit: on a replicated topic one forwarded call to the
// leader, one journal write on each copy and one fetch by each follower,
// each paid once per record had the records been spread (Kafka's sticky
// partitioner keeps a partition until its batch is full for the same
// reason). Over many turns every partition gets the same share. A batch
// stays whole however many records it has, and uses up the turns it
// spans.
//
// On a replicated topic the turn skips any partition that does not look
// writable through this node (writable): one whose forwarded commit from
// this node has been in flight for over stallAfter or lately failed
// (forwards.stalled), or one this node leads whose role takes no write
// now. Such records may go to any partition, and one whose leader this
// node cannot reach, while other nodes can and the leader keeps its lease
// and its quorum, would fail every produce sent to it through this node
// for as long as the cut lasts: no failover runs, since nothing is wrong
// with the partition. Kafka's producers skip partitions whose leader they
// cannot reach in the same way. With a turn of keylessRun records a
// partition that refuses would take all of them, not its share. When no
// partition looks writable the turn's partition is kept.
func (b *Broker) nextPartition(t meta.Topic, ts *topicState, n int, now time.Time) int {
	first := ts.produce.Add(uint64(n)) - uint64(n)
	i, nodes := b.keylessPhase(ts)
	p := int((first/keylessRun + uint64(i*t.Partitions/nodes)) % uint64(t.Partitions))
	if t.ReplicationFactor < 2 {
		return p
	}
	for i := range t.Partitions {
		if q := (p + i) % t.Partitions; b.writable(t, q, now) {
			return q
		}
	}
	return p
}

// writable reports whether a replicated partition looks able to take a
// write through this node now: not stalled (forwards.stalled) and, when
// this node leads it, its leader role taking writes (hosted.Roles.Gate:
// not taking over its leadership, nor fenced). A commit to a partition
// that fails this would wait for it or be refused.
func (b *Broker) writable(t meta.Topic, p int, now time.Time) bool {
	if b.fwd.stalled(forwardKey{t.Name, t.Incarnation, p}, now) {
		return false
	}
	return !b.owned(t.Name, p) || b.roles.Gate(t, p) == nil
}

// keylessPhase is where this node's rotation starts, as its place i among
// the cluster's n members: turn 0 is partition i*partitions/n. Nodes whose
// clients produce at the same rate then hold different partitions at a
// time rather than all the same one. Read once per topic: a member joining
// later only shifts a phase, it places nothing wrong.
func (b *Broker) keylessPhase(ts *topicState) (i, n int) {
	ts.phase.Do(func() {
		ts.phaseI, ts.phaseN = 0, 1
		ms := b.meta.Members()
		for j, m := range ms {
			if m.ID == b.cfg.NodeID {
				ts.phaseI, ts.phaseN = j, len(ms)
			}
		}
	})
	return ts.phaseI, ts.phaseN
}

// countProduced adds accepted records and their payload bytes to their
// partitions' counters: one Add each per run of records bound for the
// same partition, on the child bound for it once
// (metrics.PartitionCounters: no label hashing per request).
func countProduced(m *metrics.Metrics, topic string, recs []wal.Record) {
	for i := 0; i < len(recs); {
		bytes := len(recs[i].Payload)
		j := i + 1
		for j < len(recs) && recs[j].Partition == recs[i].Partition {
			bytes += len(recs[j].Payload)
			j++
		}
		m.MessagesProduced.Add(topic, int(recs[i].Partition), float64(j-i))
		m.BytesProduced.Add(topic, int(recs[i].Partition), float64(bytes))
		i = j
	}
}

// errDiskFull is produce's answer on a full data disk.
var errDiskFull = refusal.New(refusal.ErrDiskFull, 5*time.Second, "this node's disk is full: nothing was stored; produce resumes by itself once space is freed (delete topics, or grow the disk)")

func (a *admin) diskFull() bool { return a.cfg.Disk != nil && a.cfg.Disk.Full() }

// ingressErr says why the ingress WAL refused records, in the API's words:
// 503 with Retry-After (docs/http-api.md has no 507; a full disk is a
// temporary unavailability the client retries), naming no file of the
// server's disk (the WAL logs those).
func ingressErr(err error) error {
	switch {
	case errors.Is(err, wal.ErrNoSpace):
		return errDiskFull
	case errors.Is(err, wal.ErrFenced):
		return refusal.New(refusal.ErrFenced, time.Second, "this node's ingress log is re-reading its last segment after a disk error: nothing was stored; retry")
	case errors.Is(err, wal.ErrClosed):
		return refusal.New(refusal.ErrUnavailable, time.Second, "this node is shutting down: nothing was stored; retry")
	}
	return refusal.New(refusal.ErrUnavailable, time.Second, "this node's ingress log could not store the records after a disk error: nothing was stored; retry")
}

// CheckBatch validates the leading records of a batch whose next record
// could not even be decoded, so that the refusal names the first failing
// index, as the API promises. Topic-level refusals (404, 409) come first.
func (b *Broker) CheckBatch(topic string, recs []ProduceRecord) error {
	t, schemaOf, err := b.produceTarget(topic)
	if err != nil {
		return err
	}
	return b.validateRecords(t, schemaOf, recs, true, header.Client)
}

// produceTarget resolves a produce's topic and the topic whose schema
// applies: an attached child's schema is its parent's (the parent manages
// it while attached).
func (b *Broker) produceTarget(topic string) (meta.Topic, meta.Topic, error) {
	t, err := b.topic(topic)
	if err != nil {
		reject(b.m, topic, "not_found")
		return t, t, err
	}
	if t.Parent != "" && t.FanoutDelayMs > 0 {
		reject(b.m, topic, "delay_child")
		return t, t, refusal.New(refusal.ErrConflict, 0, "%q is a delay child of %q: it receives only delayed copies, produce to the parent", topic, t.Parent)
	}
	return t, b.schemaSource(t), nil
}

// validateRecords checks every record in order and refuses at the first
// that fails, naming its index in a batch.
func (b *Broker) validateRecords(t, schemaOf meta.Topic, recs []ProduceRecord, indexed bool, src header.Source) error {
	where := func(i int) string {
		if !indexed {
			return ""
		}
		return fmt.Sprintf("record %d: ", i)
	}
	at := func(i int, err error) error { // a batch's refusal names its index (the "index" field)
		if !indexed {
			return err
		}
		return refusal.WithIndex(err, i)
	}
	for i, r := range recs {
		switch {
		case len(r.Payload) == 0:
			reject(b.m, t.Name, "empty")
			return at(i, refusal.New(refusal.ErrInvalid, 0, "%spayload is empty", where(i)))
		case len(r.Payload) > MaxPayloadBytes:
			reject(b.m, t.Name, "too_large")
			return at(i, refusal.New(refusal.ErrTooLarge, 0, "%spayload of %d bytes is over the 1 MiB cap", where(i), len(r.Payload)))
		case len(r.Key) > MaxKeyBytes:
			reject(b.m, t.Name, "key_too_long")
			return at(i, refusal.New(refusal.ErrInvalid, 0, "%skey of %d bytes is over the 4 KiB cap (%d bytes)", where(i), len(r.Key), MaxKeyBytes))
		case r.Partition != nil && (*r.Partition < 0 || *r.Partition >= t.Partitions):
			reject(b.m, t.Name, "bad_partition")
			return at(i, refusal.New(refusal.ErrPartitionRange, 0, "%spartition %d is out of range: %q has %d partitions", where(i), *r.Partition, t.Name, t.Partitions))
		}
		if err := header.Check(r.Headers, src); err != nil {
			reject(b.m, t.Name, "bad_header")
			return at(i, refusal.New(refusal.ErrInvalid, 0, "%s%v", where(i), err))
		}
		if err := checkSchedule(r, b.cfg.Now(), where(i)); err != nil {
			reject(b.m, t.Name, "bad_schedule")
			return at(i, err)
		}
		if len(r.AWS) > header.MaxAWS || !utf8.ValidString(r.AWS) {
			reject(b.m, t.Name, "bad_header")
			return at(i, refusal.New(refusal.ErrInvalid, 0, "%smessage attributes' names and types take %d bytes, at most %d", where(i), len(r.AWS), header.MaxAWS))
		}
		if r.HasMsgID {
			if err := header.CheckMsgID(r.MsgID); err != nil {
				reject(b.m, t.Name, "bad_msg_id")
				return at(i, refusal.New(refusal.ErrInvalid, 0, "%s%v", where(i), err))
			}
		}
		if err := b.schemas.validate(schemaOf, r.Payload); err != nil {
			reject(b.m, t.Name, "schema")
			if re, ok := refusal.As(err); ok {
				return at(i, refusal.New(re.Kind, re.RetryAfter, "%s%s", where(i), re.Message))
			}
			return at(i, fmt.Errorf("%s%w", where(i), err))
		}
	}
	return nil
}

func reject(m *metrics.Metrics, topic, reason string) {
	m.ProduceRejections.WithLabelValues(topic, reason).Inc()
}

// Commit is the one local commit entry point: it commits records into a
// partition this node owns — the owner's side of the commit seam that
// produce dispatch, node RPC, fan-out, dead letters and replicated produce
// share (route.Router's Local). The partition log fsyncs and verifies
// before the records become visible.
//
// src says where the records come from. Its zero value is "from
// elsewhere" (a fan-out copy, a reroute, a peer's commit RPC, a dead
// letter): until the dispatcher has taken back this node's ingress WAL
// after a restart (Config.ReplayGate), such commits are refused as
// temporarily unavailable. A src with an Origin names records of this
// node's ingress WAL: records the log holds already (by WAL seq) are
// skipped, and a lazy commit (src.Lazy) returns the log to Flush before
// the WAL may release them; the returned Flusher is nil otherwise.
//
// A non-zero incarnation must be the topic's (when the topic has one):
// records of an earlier incarnation belong to a deleted topic
// (refusal.ErrIncarnationGone, which is also ErrTopicNotFound), for the
// dispatcher to settle with the leader; records of a later one than this
// replica knows are refused with ErrIncarnationAhead until it catches up.
// Every refusal a caller acts on is typed (package refusal): topic not
// found, partition out of range, not owner, frozen, disk full, fenced.
//
// Like storage.Log.Commit it sets the Offset of every record it stored;
// one it left out (a duplicate of the dedupe window, a WAL record the log
// held already) keeps the Offset the caller gave it (storage.NoOffset
// marks it), which names a replicated produce's records (package
// messageid).
func (b *Broker) Commit(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record, src storage.Source) (storage.Flusher, error) {
	if src.Origin == 0 {
		if g := b.cfg.ReplayGate; g != nil && g(topic, partition) {
			return nil, refusal.New(refusal.ErrUnavailable, 100*time.Millisecond, "partition %d of %q is taking back its records from this node's ingress WAL after a restart; commits from elsewhere wait until it has", partition, topic)
		}
	}
	l, c, err := b.commit(ctx, topic, incarnation, partition, recs, src)
	if err == nil {
		err = b.roles.AwaitQuorum(ctx, topic, partition, c.role, c.end)
	}
	if err != nil || !src.Lazy {
		return nil, err
	}
	return l, nil
}

// commitHere is Commit of records from elsewhere, for the broker's own
// callers that have no Flusher to keep.
func (b *Broker) commitHere(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record) error {
	_, err := b.Commit(ctx, topic, incarnation, partition, recs, storage.Source{})
	return err
}

// keptSource is src for the records the dedupe window kept (idx: their
// indices in the batch, ascending; nil: all of them).
func keptSource(src storage.Source, idx []int) storage.Source {
	if idx == nil || src.Origin == 0 {
		return src
	}
	seqs := make([]uint64, len(idx))
	for i, j := range idx {
		seqs[i] = src.Seqs[j]
	}
	src.Seqs = seqs
	return src
}

// leaderCommit is what a commit into a replicated partition leaves for
// its quorum wait: the role it was written under and the log's end right
// after it (zero for a single copy).
type leaderCommit struct {
	role *hosted.Role
	end  uint64
}

func (b *Broker) commit(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record, src storage.Source) (*storage.Log, leaderCommit, error) {
	var none leaderCommit
	t, err := b.topic(topic)
	if err != nil {
		return nil, none, err
	}
	if incarnation != 0 && t.Incarnation != 0 && incarnation != t.Incarnation {
		if incarnation > t.Incarnation {
			return nil, none, refusal.New(refusal.ErrIncarnationAhead, time.Second, "topic %q: records of incarnation %d, this node's metastore replica knows only %d yet", topic, incarnation, t.Incarnation)
		}
		return nil, none, refusal.New(refusal.ErrIncarnationGone, 0, "topic %q: records of incarnation %d, which was deleted; the topic now is incarnation %d", topic, incarnation, t.Incarnation)
	}
	if partition < 0 || partition >= t.Partitions {
		return nil, none, refusal.New(refusal.ErrPartitionRange, 0, "partition %d is out of range: %q has %d partitions", partition, topic, t.Partitions)
	}
	if !b.owned(topic, partition) {
		return nil, none, refusal.New(refusal.ErrNotOwner, time.Second, "partition %d of %q is not owned by this node", partition, topic)
	}
	// A leadership this node is taking over (a topic created a moment
	// ago) is waited for, briefly, rather than refused.
	role, err := b.roles.AwaitLeaderRole(ctx, t, partition)
	if err != nil {
		return nil, none, err
	}
	if role != nil {
		// Written under the role that was checked, or not at all
		// (hosted.Role.Hold).
		release, ok := role.Hold()
		if !ok {
			return nil, none, refusal.New(refusal.ErrNotReady, time.Second, "partition %d of %q stopped being led here: retry", partition, topic)
		}
		defer release()
	}
	for i := range recs {
		// The last guard before the log: headers it could not read back
		// (a caller inside the broker that skipped header.Check).
		if len(recs[i].Headers) > 0 {
			if err := header.CheckStored(recs[i].Headers); err != nil {
				return nil, none, refusal.New(refusal.ErrInvalid, 0, "record %d: %v", i, err)
			}
		}
	}
	done, err := b.enterCommit(topic, partition)
	if err != nil {
		return nil, none, err
	}
	defer done()
	var l *storage.Log
	for attempt := 0; ; attempt++ {
		if l, err = b.parts.Get(topic, partition); err != nil {
			return nil, none, err
		}
		err = b.dedupe(ctx, t, partition, l, recs, func(keep []storage.Record, idx []int) error {
			_, _, err := l.CommitFrom(keep, keptSource(src, idx))
			for i, j := range idx { // the window's copies: their offsets go back to recs
				recs[j].Offset = keep[i].Offset
			}
			return err
		})
		if errors.Is(err, storage.ErrClosed) && attempt == 0 {
			continue // lost a race with idle eviction: reopen once
		}
		if err != nil {
			return nil, none, hosted.StorageErr(topic, partition, "commit", err)
		}
		break
	}
	if role == nil {
		b.wake(topic)
		return l, none, nil
	}
	// A replicated commit is not visible yet: its consumers are woken
	// when a quorum holds it (hosted.Roles, on the leader's Release).
	return l, leaderCommit{role: role, end: l.End()}, nil
}
