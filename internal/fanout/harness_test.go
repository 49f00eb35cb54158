package fanout

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
	"github.com/narad-io/narad/internal/wal"
)

// node is an in-process single node: a real one-member Raft metastore, a
// broker over real partition logs, and the engine under test. The engine
// reaches them through its seams, each wrapped so a test can make one lie
// or fail on cue, and commits through a fault-injecting wrapper of the
// local commit.
type node struct {
	t     testing.TB
	dir   string
	meta  *meta.Store
	b     *broker.Broker
	e     *Engine
	m     *metrics.Metrics
	fc    *faultyCommitter
	ms    *seamMeta
	logs  *seamLogs
	stats *seamStats
	// stamps is the clock the broker stamps commit times with (the
	// committing node's clock); the engine's own is Config.Clock.
	stamps swapClock
}

// swapClock is a clock.Clock a test can replace while it runs.
type swapClock struct{ c atomic.Value }

func (s *swapClock) set(c clock.Clock) { s.c.Store(&c) }
func (s *swapClock) Now() time.Time {
	if c, ok := s.c.Load().(*clock.Clock); ok {
		return (*c).Now()
	}
	return time.Now()
}

// seamMeta is the engine's metastore: the real one, unless a test sets a
// hook.
type seamMeta struct {
	Metastore
	mu       sync.Mutex
	confirm  func(name, epoch string) (exists, current bool, err error)
	caughtUp func() bool
	owner    func(name string, p int) (string, bool)
}

func (s *seamMeta) hooks() (func(string, string) (bool, bool, error), func() bool, func(string, int) (string, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirm, s.caughtUp, s.owner
}

func (s *seamMeta) ConfirmTopic(ctx context.Context, name, epoch string) (bool, bool, error) {
	if f, _, _ := s.hooks(); f != nil {
		return f(name, epoch)
	}
	return s.Metastore.ConfirmTopic(ctx, name, epoch)
}

func (s *seamMeta) AppliedCaughtUp() bool {
	if _, f, _ := s.hooks(); f != nil {
		return f()
	}
	return s.Metastore.AppliedCaughtUp()
}

func (s *seamMeta) Owner(name string, p int) (string, bool) {
	if _, _, f := s.hooks(); f != nil {
		return f(name, p)
	}
	return s.Metastore.Owner(name, p)
}

func (s *seamMeta) set(f func(*seamMeta)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// seamLogs is the engine's log source: the broker's registry, counting
// opens (Get), with a hook that can replace what Describe says.
type seamLogs struct {
	LogSource
	gets     atomic.Int64
	mu       sync.Mutex
	describe func(name string, p int, st storage.Stats, err error) (storage.Stats, error)
}

func (s *seamLogs) Get(name string, p int) (*storage.Log, error) {
	s.gets.Add(1)
	return s.LogSource.Get(name, p)
}

func (s *seamLogs) Describe(name string, p int) (storage.Stats, error) {
	st, err := s.LogSource.Describe(name, p)
	s.mu.Lock()
	f := s.describe
	s.mu.Unlock()
	if f != nil {
		return f(name, p, st, err)
	}
	return st, err
}

// seamStats is the engine's stats source: the broker, with hooks that can
// rewrite local reports and stand in for other owners' Stats RPC.
type seamStats struct {
	Stats
	mu     sync.Mutex
	local  func([]topic.PartitionReport) []topic.PartitionReport
	remote func(owner, name string, parts []int) ([]topic.PartitionReport, error)
}

func (s *seamStats) RemoteStats(ctx context.Context, owner, name string, parts []int) ([]topic.PartitionReport, error) {
	s.mu.Lock()
	f := s.remote
	s.mu.Unlock()
	if f != nil {
		return f(owner, name, parts)
	}
	return s.Stats.RemoteStats(ctx, owner, name, parts)
}

func (s *seamStats) LocalReports(name string, parts []int, exact bool) []topic.PartitionReport {
	reps := s.Stats.LocalReports(name, parts, exact)
	s.mu.Lock()
	f := s.local
	s.mu.Unlock()
	if f != nil {
		return f(reps)
	}
	return reps
}

// faultyCommitter fails commits to chosen child partitions and counts
// every attempt per destination.
type faultyCommitter struct {
	inner route.Committer
	mu    sync.Mutex
	fail  map[string]bool
	tries map[string]int
	oks   map[string]int
	// onFail, when set, sees the records of every commit it fails.
	onFail func(topic string, p int, recs []storage.Record)
	// onTry, when set, runs first in every commit (in the committing
	// goroutine, so it may block it).
	onTry func(topic string, p int, recs []storage.Record)
}

func (f *faultyCommitter) Commit(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
	k := fmt.Sprintf("%s/%d", topic, p)
	f.mu.Lock()
	f.tries[k]++
	bad := f.fail[k]
	onFail, onTry := f.onFail, f.onTry
	f.mu.Unlock()
	if onTry != nil {
		onTry(topic, p, recs)
	}
	if bad {
		if onFail != nil {
			onFail(topic, p, recs)
		}
		return fmt.Errorf("injected failure for %s", k)
	}
	if err := f.inner.Commit(ctx, topic, inc, p, recs); err != nil {
		return err
	}
	f.mu.Lock()
	f.oks[k]++
	f.mu.Unlock()
	return nil
}

func (f *faultyCommitter) set(k string, bad bool) {
	f.mu.Lock()
	f.fail[k] = bad
	f.mu.Unlock()
}

func (f *faultyCommitter) count(k string) (tries, oks int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tries[k], f.oks[k]
}

// newNode builds a node whose engine runs with short test intervals where
// cfg leaves them zero (reconcile 20 ms, backoff 50 ms, quick tries 5 and
// 10 ms, long-poll 100 ms).
func newNode(t testing.TB, cfg Config) *node {
	t.Helper()
	if cfg.Reconcile == 0 {
		cfg.Reconcile = 20 * time.Millisecond
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 50 * time.Millisecond
	}
	if cfg.QuickRetries == nil {
		cfg.QuickRetries = []time.Duration{5 * time.Millisecond, 10 * time.Millisecond}
	}
	if cfg.SlabPoll == 0 {
		cfg.SlabPoll = 100 * time.Millisecond
	}
	return newNodeAsConfigured(t, cfg)
}

// newNodeAsConfigured builds a node whose engine takes cfg as given: zero
// values are the engine's own defaults.
func newNodeAsConfigured(t testing.TB, cfg Config) *node {
	t.Helper()
	dir := t.TempDir()
	ms, err := meta.Open(meta.Options{Dir: filepath.Join(dir, "metastore"), NodeID: "n1", BindAddr: "127.0.0.1:0", Bootstrap: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ms.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := wal.Open(filepath.Join(dir, "ingress"), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, dir: dir, meta: ms, m: metrics.New()}
	m := n.m
	b := broker.New(broker.Config{DataDir: dir, NodeID: "n1", Now: n.stamps.Now, FS: cfg.FS}, ms, w, m) // one FS: fault tests fail parent logs too
	b.Start()
	b.OpenCreateGate()
	fc := &faultyCommitter{inner: route.CommitFunc(func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
		_, err := b.Commit(ctx, topic, inc, p, recs, storage.Source{})
		return err
	}), fail: map[string]bool{}, tries: map[string]int{}, oks: map[string]int{}}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	n.b, n.fc = b, fc
	n.ms = &seamMeta{Metastore: ms}
	n.logs = &seamLogs{LogSource: b.Partitions()}
	n.stats = &seamStats{Stats: b}
	n.e = n.newEngine(cfg)
	t.Cleanup(func() {
		n.e.Close()
		b.Close()
		w.Close()
		ms.Close()
	})
	return n
}

// newEngine builds an engine over the node's seams, as a restarted node
// (or another owner) would; Start is the caller's.
func (n *node) newEngine(cfg Config) *Engine {
	return New(cfg, "n1", n.ms, n.logs, n.b, n.stats, n.fc, n.m)
}

func (n *node) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	n.t.Cleanup(cancel)
	return ctx
}

func (n *node) createTopic(name string, partitions int, retentionMs int64) {
	n.t.Helper()
	req := broker.CreateTopicRequest{Name: name, Partitions: partitions, RetentionMs: &retentionMs}
	if _, err := n.b.CreateTopic(n.ctx(), req, ""); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) attach(parent, child string, delayMs int64) meta.Topic {
	n.t.Helper()
	if _, err := n.e.Attach(n.ctx(), parent, AttachRequest{Child: child, DelayMs: delayMs}); err != nil {
		n.t.Fatal(err)
	}
	c, _ := n.meta.Topic(child)
	return c
}

// link creates topics src (parentParts partitions) and dst (childParts)
// and attaches dst to src, the setup most tests share.
func (n *node) link(parentParts, childParts int) meta.Topic {
	n.t.Helper()
	n.createTopic("src", parentParts, 0)
	n.createTopic("dst", childParts, 0)
	return n.attach("src", "dst", 0)
}

// commit writes records straight into a parent partition log (the
// dispatcher's job in a server), so tests control exactly what lands where.
func (n *node) commit(topic string, p int, keys ...string) {
	n.t.Helper()
	recs := make([]storage.Record, len(keys))
	for i, k := range keys {
		if k != "" {
			recs[i].Key = []byte(k)
		}
		recs[i].Payload = []byte(fmt.Sprintf("%s|p%d|%s", topic, p, k))
	}
	if err := commitLocal(n.b, n.ctx(), topic, p, recs); err != nil {
		n.t.Fatal(err)
	}
}

// read returns every committed record of topic/p.
func (n *node) read(topic string, p int) []storage.Record {
	n.t.Helper()
	l, err := n.b.Partitions().Get(topic, p)
	if err != nil {
		n.t.Fatal(err)
	}
	res, err := l.Read(0, 1<<20, 1<<30, storage.NoDueLimit)
	if err != nil {
		n.t.Fatal(err)
	}
	return res.Records
}

func (n *node) total(topic string, parts int) int {
	sum := 0
	for p := 0; p < parts; p++ {
		sum += len(n.read(topic, p))
	}
	return sum
}

func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// commitLocal commits records from elsewhere into whichever incarnation
// of topic is current on b (broker.Broker.Commit with no source).
func commitLocal(b *broker.Broker, ctx context.Context, topic string, p int, recs []storage.Record) error {
	_, err := b.Commit(ctx, topic, 0, p, recs, storage.Source{})
	return err
}
