package fanout

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/vfs"
)

// Config holds the engine's constants; zero values take
// the defaults.
type Config struct {
	MaxBatchRecords int           // 4096
	MaxBatchBytes   int           // 4 MiB
	Linger          time.Duration // 25 ms
	SlabPoll        time.Duration // 1 s: long-poll for a slab's first record
	Reconcile       time.Duration // 1 s
	ForcedPassEvery time.Duration // 30 s (reconcileForcedPassEvery)
	SweepEveryTicks int           // 30: orphan sweep on every 30th caught-up tick
	DueWakeCap      time.Duration // 30 s (defaultFanoutDueWakeCap)
	QuickRetries    []time.Duration
	Backoff         time.Duration // 1 s
	Parallel        int           // 16 child-partition commits in flight
	// Clock is the engine's time: the delay gate, linger, long-poll,
	// backoffs and the reconciler's ticks; nil is the system clock.
	Clock  clock.Clock
	Logger *slog.Logger
	// FS is where cursor files are read and written; nil is the real
	// disk (vfs.Default). Tests put an errorfs here.
	FS vfs.FS
}

func (c *Config) withDefaults() {
	if c.MaxBatchRecords <= 0 {
		c.MaxBatchRecords = 4096
	}
	if c.MaxBatchBytes <= 0 {
		c.MaxBatchBytes = 4 << 20
	}
	if c.Linger <= 0 {
		c.Linger = 25 * time.Millisecond
	}
	if c.SlabPoll <= 0 {
		c.SlabPoll = time.Second
	}
	if c.Reconcile <= 0 {
		c.Reconcile = time.Second
	}
	if c.ForcedPassEvery <= 0 {
		c.ForcedPassEvery = 30 * time.Second
	}
	if c.SweepEveryTicks <= 0 {
		c.SweepEveryTicks = 30
	}
	if c.DueWakeCap <= 0 {
		c.DueWakeCap = 30 * time.Second
	}
	if c.QuickRetries == nil {
		c.QuickRetries = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}
	}
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	if c.Parallel <= 0 {
		c.Parallel = 16
	}
	c.Clock = clock.Or(c.Clock)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.FS = vfs.Or(c.FS)
}

// Engine runs this node's cursors and answers the children API.
type Engine struct {
	cfg    Config
	clk    clock.Clock
	self   string
	meta   Metastore
	logs   LogSource
	topics TopicAdmin
	stats  Stats
	commit route.Committer
	m      *metrics.Metrics

	mu      sync.Mutex
	running map[cursorKey]*cursor
	rr      map[string]*atomic.Uint64 // keyless rotation per child topic
	dropped map[linkKey]*atomic.Uint64
	// filtered counts, per link, the records its cursors on this node
	// stepped over since the node started (rule: filtered links).
	filtered map[linkKey]*atomic.Uint64

	remote route.Committer // remote children's batch produce: remoteCommitter

	rec   reconcileState
	owned ownedPaths // cursor file paths running cursors own (sweep.go)

	// Test seams, set before Start: exitHook runs in an exiting cursor's
	// goroutine between closing done and reporting the exit; sweepHook
	// runs in the sweep between the leader's confirmation and the removal.
	exitHook  func(cursorKey)
	sweepHook func(path string)

	stop chan struct{}
	wg   sync.WaitGroup
}

type cursorKey struct {
	parent, child string
	partition     int
}

type linkKey struct{ parent, child string }

// New builds the engine; Start runs the reconciler. Local children commit
// through commit (the route seam produce uses); remote children through a
// committer built on the public client (remotecommit.go).
func New(cfg Config, self string, ms Metastore, logs LogSource, topics TopicAdmin, stats Stats, commit route.Committer, m *metrics.Metrics) *Engine {
	cfg.withDefaults()
	return &Engine{cfg: cfg, clk: cfg.Clock, self: self, meta: ms, logs: logs, topics: topics, stats: stats, commit: commit, m: m,
		remote:  newRemoteCommitter(ms),
		running: map[cursorKey]*cursor{}, rr: map[string]*atomic.Uint64{}, dropped: map[linkKey]*atomic.Uint64{},
		filtered: map[linkKey]*atomic.Uint64{},
		stop:     make(chan struct{})}
}

// Start runs the reconciler until Close.
func (e *Engine) Start() {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		t := e.clk.NewTicker(e.cfg.Reconcile)
		defer t.Stop()
		e.Tick()
		for {
			select {
			case <-e.stop:
				return
			case <-t.C():
				e.Tick()
			}
		}
	}()
}

// Close stops the reconciler and every cursor, and waits for them.
func (e *Engine) Close() {
	select {
	case <-e.stop:
		return
	default:
	}
	close(e.stop)
	e.wg.Wait()
	e.mu.Lock()
	cs := make([]*cursor, 0, len(e.running))
	for _, c := range e.running {
		cs = append(cs, c)
	}
	e.mu.Unlock()
	for _, c := range cs {
		c.cancel()
		<-c.done
	}
	if rc, ok := e.remote.(*remoteCommitter); ok {
		rc.close()
	}
}

func (e *Engine) rotation(child string) *atomic.Uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.rr[child]
	if !ok {
		r = &atomic.Uint64{}
		e.rr[child] = r
	}
	return r
}

func (e *Engine) droppedCounter(parent, child string) *atomic.Uint64 {
	return e.linkCounter(e.dropped, parent, child)
}

func (e *Engine) filteredCounter(parent, child string) *atomic.Uint64 {
	return e.linkCounter(e.filtered, parent, child)
}

// linkCounter is the link's counter in m, made on first use.
func (e *Engine) linkCounter(m map[linkKey]*atomic.Uint64, parent, child string) *atomic.Uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := linkKey{parent, child}
	d, ok := m[k]
	if !ok {
		d = &atomic.Uint64{}
		m[k] = d
	}
	return d
}

// sleep waits d on the engine's clock; false when ctx ended first.
func (e *Engine) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	return clock.Sleep(ctx, e.clk, d) == nil
}
