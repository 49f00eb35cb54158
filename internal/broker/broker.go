package broker

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/notify"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// Broker is one node's data plane: the request-level verbs (produce,
// the local commit, consume, ack, redrive, purge, replay, describe) over
// the partitions hosted here, and, through the embedded admin, topic
// administration (create, alter, delete, list: validate, then a
// metastore command).
type Broker struct {
	*admin

	cfg  Config
	meta *meta.Store
	wal  *wal.WAL
	// parts is every partition hosted here: its log, queue and dedupe
	// window (package hosted).
	parts *hosted.Set
	m     *metrics.Metrics
	// fwd coalesces the produces forwarded to replicated partitions'
	// leaders (forward_batch.go).
	fwd forwards

	tmu    sync.Mutex
	topics map[string]*topicState

	roles *hosted.Roles // the replicated partitions' roles here

	backlog     *hosted.Backlog     // the backlog gauges (narad_consumer_lag_messages, ...)
	deadLetters *hosted.DeadLetters // hands held records to their dead-letter topics
	upkeep      *upkeep             // the loops over the hosted partitions (janitor.go)

	stop chan struct{}
	wg   sync.WaitGroup
	// life ends at Close: the loops' calls that may block (a dead-letter
	// commit to another node) give up then.
	life    context.Context
	endLife context.CancelFunc
}

// topicState is per-topic in-memory state: the broadcast that wakes
// long-polling consumers of any partition, and the round-robin counters.
type topicState struct {
	notify  *notify.Broadcast
	produce atomic.Uint64 // keyless records placed so far (nextPartition); dead letters take turns of one
	phase   sync.Once     // sets phaseI and phaseN (keylessPhase)
	phaseI  int
	phaseN  int
	consume atomic.Uint64 // start partition of unpinned consumes
}

// New builds a broker over an open metastore and ingress WAL. Start runs
// its background duties.
func New(cfg Config, ms *meta.Store, w *wal.WAL, m *metrics.Metrics) *Broker {
	cfg.withDefaults()
	b := &Broker{cfg: cfg, meta: ms, wal: w, m: m,
		topics: make(map[string]*topicState),
		stop:   make(chan struct{})}
	b.life, b.endLife = context.WithCancel(context.Background())
	opts := storage.Options{
		SegmentBytes:       cfg.SegmentBytes,
		Codec:              cfg.Codec,
		Level:              cfg.Level,
		Now:                cfg.Now,
		HWMPersistInterval: cfg.HWMPersistPeriod,
		FS:                 cfg.FS,
		SkipCorrupt:        cfg.SkipCorrupt,
		Journal:            cfg.Journal,
		Hooks: storage.Hooks{
			Flush:            func(d time.Duration) { m.FlushDuration.Observe(d.Seconds()) },
			Fsync:            func(d time.Duration) { m.FsyncDuration.Observe(d.Seconds()) },
			HWMPersist:       func(d time.Duration) { m.HWMPersistDuration.Observe(d.Seconds()) },
			CorruptSkipped:   func(n uint64) { m.CorruptSkipped.Add(float64(n)) },
			Fenced:           func() { m.Errors.WithLabelValues("storage", "fenced").Inc() },
			HWMPersistFailed: func() { m.Errors.WithLabelValues("storage", "hwm_persist").Inc() },
			ReadFailed:       func() { m.Errors.WithLabelValues("storage", "read").Inc() },
			Shortfall:        m.RecoveryShortfalls.Inc,
		},
	}
	if cfg.SkipCorrupt {
		cfg.Logger.Warn("storage.skip_corrupt is on: partition logs with mid-segment damage open, and readers skip the damaged records (recorded loss, counted in narad_consumer_corrupt_skipped_total); turn it off once the damaged partitions have been read past")
	}
	b.parts = hosted.New(hosted.Config{
		Root: filepath.Join(cfg.DataDir, "topics"), Log: opts, Now: cfg.Now, Logger: cfg.Logger,
		MaxIDs: cfg.DedupeMaxIDs,
		// A replicated partition's log opens held (replica.Log).
		Held: func(topic string, p int) bool { return b.roles.ReplicatedHere(topic, p) },
		Wake: func(topic string) { b.wake(topic) },
		Hooks: hosted.Hooks{
			OpenLogs:        func(n int) { m.OpenPartitionLogs.Set(float64(n)) },
			StorageError:    func(kind string) { m.Errors.WithLabelValues("storage", kind).Inc() },
			QueueError:      func(kind string) { m.Errors.WithLabelValues("broker", kind).Inc() },
			CountsRestored:  func(n int) { m.CountsRestored.Add(float64(n)) },
			DedupeForgotten: func(topic string, n int) { m.DedupeForgotten.WithLabelValues(topic).Add(float64(n)) },
		},
	})
	b.roles = hosted.NewRoles(hosted.RolesConfig{NodeID: cfg.NodeID, Replication: cfg.Replication, Fenced: cfg.Fenced,
		ReplicaCommitWait: cfg.ReplicaCommitWait, TakeoverWait: cfg.TakeoverWait, Now: cfg.Now, Logger: cfg.Logger, CursorCopies: cfg.CursorCopies},
		ms, m, b.parts, b.life, b.wake)
	b.backlog = hosted.NewBacklog(b.parts, ms, m, cfg.NodeID, cfg.Now)
	b.upkeep = &upkeep{cfg: &b.cfg, meta: ms, m: m, parts: b.parts, roles: b.roles, wake: b.wake}
	b.admin = &admin{cfg: &b.cfg, meta: ms, m: m, parts: b.parts, forget: b.forgetTopic}
	b.deadLetters = hosted.NewDeadLetters(b.parts, ms, m, hosted.DeadLettersConfig{NodeID: cfg.NodeID, Now: cfg.Now,
		Logger: cfg.Logger, Local: b.commitHere, Remote: cfg.Remote, Wake: b.wake,
		Rotate: func(topic string) uint64 { return b.topicState(topic).produce.Add(1) }})
	return b
}

// OpenCreateGate lets topic creation in (after the startup reconcile).
func (a *admin) OpenCreateGate() { a.createOpen.Store(true) }

// Partitions exposes the partitions hosted here (fan-out cursors read
// their logs through it).
func (b *Broker) Partitions() *hosted.Set { return b.parts }

// Start runs the background loops until Close.
func (b *Broker) Start() {
	b.loop(b.cfg.FrontierPersist, b.upkeep.persistFrontiers)
	b.loop(b.cfg.ExpirySweep, b.upkeep.sweepExpired)
	b.loop(b.cfg.ExpirySweep, b.backlog.Gauge)
	b.loop(b.cfg.DeadLetterPass, func() { b.deadLetters.Pass(b.life) })
	b.loop(b.cfg.RetentionSweep, b.upkeep.sweepRetention)
	if b.cfg.IdleEviction > 0 {
		b.loop(max(b.cfg.IdleEviction/4, 10*time.Millisecond), b.upkeep.evictIdle)
	}
	b.loop(time.Second, b.reconcileTopics)
	b.loop(time.Second, b.roles.UnholdSingleCopies)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.roles.Run(b.stop)
	}()
}

func (b *Broker) loop(every time.Duration, fn func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

// Close stops the loops, persists every frontier and closes every log
// cleanly.
func (b *Broker) Close() error {
	select {
	case <-b.stop:
		return nil
	default:
	}
	close(b.stop)
	b.endLife()
	b.wg.Wait()
	b.roles.Close()
	b.upkeep.persistFrontiers()
	b.parts.PersistAllCounts() // a clean stop loses no delivery count
	return b.parts.CloseAll()
}

// wake fires topic's broadcast: its parked consumers look again.
func (b *Broker) wake(topic string) { b.topicState(topic).notify.Fire() }

func (b *Broker) topicState(name string) *topicState {
	b.tmu.Lock()
	defer b.tmu.Unlock()
	ts, ok := b.topics[name]
	if !ok {
		ts = &topicState{notify: notify.New()}
		b.topics[name] = ts
	}
	return ts
}

// topic looks up a topic record (the version-keyed cache: no bbolt read).
func (a *admin) topic(name string) (meta.Topic, error) {
	if err := ValidateTopicName(name); err != nil {
		return meta.Topic{}, err
	}
	t, ok := a.meta.Topic(name)
	if !ok {
		return meta.Topic{}, refusal.New(refusal.ErrTopicNotFound, 0, "topic %q does not exist", name)
	}
	if t.Remote != nil {
		return meta.Topic{}, refusal.New(refusal.ErrTopicNotFound, 0, "topic %q does not exist here: it is a remote child of %q", name, t.Parent)
	}
	return t, nil
}

// Metrics is the registry this broker reports to, for the components
// wired around it.
func (b *Broker) Metrics() *metrics.Metrics { return b.m }

// owned reports whether this node serves topic/partition now.
func (b *Broker) owned(topic string, partition int) bool {
	owner, ok := b.meta.Owner(topic, partition)
	return ok && owner == b.cfg.NodeID
}

// metaErr maps metastore outcomes onto typed refusals.
func metaErr(err error) error {
	_, refused := refusal.As(err)
	switch {
	case err == nil:
		return nil
	case refused:
		return err
	case errors.Is(err, meta.ErrExists), errors.Is(err, meta.ErrConflict):
		return refusal.New(refusal.ErrConflict, 0, "%s", trimMeta(err))
	case errors.Is(err, meta.ErrNotFound):
		return refusal.New(refusal.ErrNotFound, 0, "%s", trimMeta(err))
	case errors.Is(err, meta.ErrInvalid):
		return refusal.New(refusal.ErrInvalid, 0, "%s", trimMeta(err))
	case errors.Is(err, meta.ErrOutcomeUnknown):
		return refusal.New(refusal.ErrUnavailable, time.Second, "the metastore could not confirm the change in time (its leader was lost or slow): it may or may not be made; check, then retry")
	case errors.Is(err, syscall.ENOSPC):
		// Raft could not write its log: the change is not made.
		return refusal.New(refusal.ErrDiskFull, 5*time.Second, "this node's disk is full: the metastore cannot record the change; free space (delete topics, or grow the disk) and retry")
	case errors.Is(err, meta.ErrNotLeader), errors.Is(err, meta.ErrNotConfirmed), errors.Is(err, meta.ErrClosed),
		errors.Is(err, context.DeadlineExceeded):
		return refusal.New(refusal.ErrUnavailable, time.Second, "metastore unavailable: %v", err)
	}
	return err
}

func trimMeta(err error) string {
	s := err.Error()
	if len(s) > 6 && s[:6] == "meta: " {
		return s[6:]
	}
	return s
}
