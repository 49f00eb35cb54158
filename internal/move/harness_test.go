package move

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pair is two nodes, "src" and "dst", over one metastore, each a broker
// with its Freezes and Source: the session runs for dst against src's
// Source directly (node RPC is tested elsewhere), with faults injected at
// the Remote. Both run on one fake clock.
type pair struct {
	t        *testing.T
	ms       *meta.Store
	clk      *clock.Fake
	src, dst *node
	w        *Worker // dst's
	remote   *fakeRemote
}

type node struct {
	id      string
	dir     string
	b       *broker.Broker
	freezes *Freezes
	source  *Source
	close   func()
}

// fakeRemote serves a session from the source node's Source, as node RPC
// would, recording every freeze call.
type fakeRemote struct {
	ms  *meta.Store
	src *Source

	mu       sync.Mutex
	freezes  []time.Duration
	holders  []string
	hwmShift uint64 // added to the second freeze's answer: "something slipped in"
	flipErr  error  // returned by Flip
	flipDoes bool   // with flipErr: flip anyway (the answer was lost)
	filesErr error  // returned by MoveFiles
	files    int    // MoveFiles calls
	reads    int    // MoveRead calls
}

func (f *fakeRemote) MoveFreeze(ctx context.Context, _ string, topic string, p int, ttl time.Duration, holder string) (uint64, error) {
	hwm, err := f.src.MoveFreeze(ctx, topic, p, ttl, holder)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.freezes = append(f.freezes, ttl)
	f.holders = append(f.holders, holder)
	if ttl > 0 && len(f.freezes) > 1 {
		hwm += f.hwmShift
	}
	return hwm, err
}

func (f *fakeRemote) MoveFiles(ctx context.Context, _ string, topic string, p int) ([]storage.PartitionFile, uint64, error) {
	f.mu.Lock()
	f.files++
	err := f.filesErr
	f.mu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	return f.src.MoveFiles(ctx, topic, p)
}

func (f *fakeRemote) MoveRead(ctx context.Context, _ string, topic string, p int, name string, off, n int64) ([]byte, error) {
	f.mu.Lock()
	f.reads++
	f.mu.Unlock()
	return f.src.MoveRead(ctx, topic, p, name, off, n)
}

func (f *fakeRemote) Flip(ctx context.Context, topic string, p int, from, to string) error {
	f.mu.Lock()
	flipErr, does := f.flipErr, f.flipDoes
	f.mu.Unlock()
	if flipErr != nil && !does {
		return flipErr
	}
	if err := f.ms.FlipOwner(ctx, topic, p, from, to); err != nil {
		return err
	}
	return flipErr
}

func (f *fakeRemote) freezeCalls() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.freezes...)
}

func newPair(t *testing.T) *pair {
	dir := t.TempDir()
	ms := metatest.Leader(t, dir, "dst")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := &pair{t: t, ms: ms, clk: clock.NewFake(time.Time{})}
	p.src, p.dst = p.node("src", filepath.Join(dir, "src")), p.node("dst", filepath.Join(dir, "dst"))
	p.remote = &fakeRemote{ms: ms, src: p.src.source}
	p.w = p.worker(p.dst, p.remote)
	if err := ms.CreateTopic(ctx, meta.Topic{Name: "orders", Partitions: 1, RetentionMs: 0, VisibilityTimeoutMs: 30000,
		MaxInFlight: 1024, MaxAckedAhead: 1024}, []meta.Assignment{{Topic: "orders", Partition: 0, Owner: "src"}}, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// node starts (or, on an existing dir, restarts) a node's broker with its
// freezes, loading the freezes written down there.
func (p *pair) node(id, dir string) *node {
	w, err := wal.Open(filepath.Join(dir, "ingress"), wal.Options{})
	if err != nil {
		p.t.Fatal(err)
	}
	fz := NewFreezes(p.clk, nil)
	b := broker.New(broker.Config{DataDir: dir, NodeID: id, SegmentBytes: 4096, Admission: fz}, p.ms, w, metrics.New())
	src, err := NewSource(id, p.ms, brokerData{b.Partitions(), b}, fz)
	if err != nil {
		p.t.Fatal(err)
	}
	n := &node{id: id, dir: dir, b: b, freezes: fz, source: src}
	b.Start()
	var once sync.Once
	n.close = func() { once.Do(func() { b.Close(); w.Close() }) }
	p.t.Cleanup(n.close)
	return n
}

func (p *pair) worker(n *node, r Remote) *Worker {
	return NewWorker(n.source, WorkerConfig{Remote: r, DataDir: n.dir, Clock: p.clk})
}

func (p *pair) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	p.t.Cleanup(cancel)
	return ctx
}

// fill commits n records at the source (several segments: 4 KiB each).
// fillOrigin is the WAL identity fill's records name as their source.
const fillOrigin = 0xA11CE

func (p *pair) fill(n int) {
	for i := 0; i < n; i += 10 {
		var recs []storage.Record
		for j := i; j < min(i+10, n); j++ {
			// Each from another node's ingress WAL, as a dispatcher's
			// commit by node RPC: the log keeps its WAL source, from
			// which its message id is derived.
			recs = append(recs, storage.Record{Key: []byte(fmt.Sprintf("k%d", j%7)), Payload: []byte(fmt.Sprintf("record-%04d-%0100d", j, j)),
				Origin: fillOrigin, Seq: uint64(3*j + 1)})
		}
		if err := commitLocal(p.src.b, p.ctx(), "orders", 0, recs); err != nil {
			p.t.Fatal(err)
		}
	}
}

func (p *pair) commitAtSource() error {
	return commitLocal(p.src.b, p.ctx(), "orders", 0, []storage.Record{{Payload: []byte("x")}})
}

func (p *pair) target() meta.Assignment {
	if err := p.ms.SetTarget(p.ctx(), "orders", 0, "src", "dst"); err != nil {
		p.t.Fatal(err)
	}
	return p.ms.Assignments("orders")[0]
}

func (n *node) partDir(t *testing.T) string {
	d, err := n.b.Partitions().Dir("orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// eventually waits for cond, failing the test past a real-time deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
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

// brokerData is a broker's data plane as a move sees it (Partitions), as
// the server wires it: its hosted partitions, and its word on replicas.
type brokerData struct {
	Files // the broker's Partitions()
	b     *broker.Broker
}

func (d brokerData) WithoutReplica(topic string, p int, remove func() error) error {
	return d.b.WithoutReplica(topic, p, remove)
}
