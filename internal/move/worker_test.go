package move

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/rpc"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pair is two brokers, "src" and "dst", over one metastore: the move
// session runs for dst against src's broker directly (the node RPC is
// tested elsewhere), with faults injected at the seams.
type pair struct {
	t        *testing.T
	ms       *meta.Store
	src, dst *broker.Broker
	w        *Worker
	remote   *fakeRemote
}

type fakeRemote struct {
	ms  *meta.Store
	src *broker.Broker

	mu       sync.Mutex
	freezes  []time.Duration
	hwmShift uint64 // added to the second freeze's answer: "something slipped in"
	flipErr  error  // returned by Flip
	flipDoes bool   // with flipErr: flip anyway (the answer was lost)
}

func (f *fakeRemote) MoveFreeze(_ context.Context, _ string, topic string, p int, ttl time.Duration, holder string) (uint64, error) {
	var hwm uint64
	var err error
	if ttl > 0 {
		hwm, err = f.src.Freeze(topic, p, ttl, holder)
	} else {
		_, err = f.src.Thaw(topic, p, holder)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.freezes = append(f.freezes, ttl)
	if ttl > 0 && len(f.freezes) > 1 {
		hwm += f.hwmShift
	}
	return hwm, err
}

func (f *fakeRemote) MoveFiles(_ context.Context, _ string, topic string, p int) ([]rpc.MoveFile, uint64, error) {
	files, hwm, err := f.src.PartitionFiles(topic, p)
	out := make([]rpc.MoveFile, len(files))
	for i, x := range files {
		out[i] = rpc.MoveFile{Name: x.Name, Size: x.Size}
	}
	return out, hwm, err
}

func (f *fakeRemote) MoveRead(_ context.Context, _ string, topic string, p int, name string, off, n int64) ([]byte, error) {
	return f.src.ReadPartitionFile(topic, p, name, off, n)
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

func newPair(t *testing.T) *pair {
	dir := t.TempDir()
	ms, err := meta.Open(meta.Options{Dir: filepath.Join(dir, "metastore"), NodeID: "dst", BindAddr: "127.0.0.1:0",
		Bootstrap: true, Logger: slog.New(slog.DiscardHandler), RaftLogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ms.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	mk := func(id string) *broker.Broker {
		w, err := wal.Open(filepath.Join(dir, id, "ingress"), wal.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b := broker.New(broker.Config{DataDir: filepath.Join(dir, id), NodeID: id, SegmentBytes: 4096}, ms, w, metrics.New())
		b.Start()
		t.Cleanup(func() { b.Close(); w.Close() })
		return b
	}
	p := &pair{t: t, ms: ms, src: mk("src"), dst: mk("dst")}
	t.Cleanup(func() { ms.Close() })
	p.remote = &fakeRemote{ms: ms, src: p.src}
	p.w = &Worker{Self: "dst", Meta: ms, Broker: p.dst, Remote: p.remote, Log: slog.New(slog.DiscardHandler)}
	if err := ms.CreateTopic(ctx, meta.Topic{Name: "orders", Partitions: 1, RetentionMs: 0, VisibilityTimeoutMs: 30000,
		MaxInFlight: 1024, MaxAckedAhead: 1024}, []meta.Assignment{{Topic: "orders", Partition: 0, Owner: "src"}}, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pair) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	p.t.Cleanup(cancel)
	return ctx
}

// fill commits n records at the source (several segments: 4 KiB each).
func (p *pair) fill(n int) {
	for i := 0; i < n; i += 10 {
		var recs []storage.Record
		for j := i; j < min(i+10, n); j++ {
			recs = append(recs, storage.Record{Key: []byte(fmt.Sprintf("k%d", j%7)), Payload: []byte(fmt.Sprintf("record-%04d-%0100d", j, j))})
		}
		if err := p.src.CommitLocal(p.ctx(), "orders", 0, recs); err != nil {
			p.t.Fatal(err)
		}
	}
}

func (p *pair) target() meta.Assignment {
	if err := p.ms.SetTarget(p.ctx(), "orders", 0, "src", "dst"); err != nil {
		p.t.Fatal(err)
	}
	return p.ms.Assignments("orders")[0]
}

func (p *pair) dstDir() string {
	d, _ := p.dst.Registry().Dir("orders", 0)
	return d
}

// A session copies every record (across segments), installs the copy and
// flips ownership; the source stays frozen: its copy is stale now.
func TestSessionMovesAPartition(t *testing.T) {
	p := newPair(t)
	p.fill(300)
	if err := p.w.session(p.ctx(), p.target()); err != nil {
		t.Fatal(err)
	}
	if a := p.ms.Assignments("orders")[0]; a.Owner != "dst" || a.Target != "" {
		t.Fatalf("after the move: %+v", a)
	}
	l, err := p.dst.Registry().Get("orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Read(0, 1000, 1<<30, storage.NoDueLimit)
	if err != nil || len(res.Records) != 300 || l.HWM() != 300 {
		t.Fatalf("the moved copy: %d records, hwm %d, %v", len(res.Records), l.HWM(), err)
	}
	for i, r := range res.Records {
		if want := fmt.Sprintf("record-%04d-%0100d", i, i); string(r.Payload) != want {
			t.Fatalf("record %d is %q", i, r.Payload)
		}
	}
	for _, ttl := range p.remote.freezes {
		if ttl == 0 {
			t.Fatal("the source was thawed after a successful flip")
		}
	}
	if got := p.src.ExpiredFreezes(); len(got) != 0 {
		t.Fatalf("freeze already expired: %v", got)
	}
}

// A flip the leader refuses leaves the source authoritative: the installed
// copy is removed and the source thawed.
func TestSessionRefusedFlipRollsBack(t *testing.T) {
	p := newPair(t)
	p.fill(50)
	a := p.target()
	p.remote.flipErr = errors.New("refused")
	if err := p.w.session(p.ctx(), a); err == nil {
		t.Fatal("a refused flip reported success")
	}
	if _, err := os.Stat(p.dstDir()); !os.IsNotExist(err) {
		t.Fatalf("the copy is still installed: %v", err)
	}
	if last := p.remote.freezes[len(p.remote.freezes)-1]; last != 0 {
		t.Fatal("the source was not thawed")
	}
	if err := p.src.CommitLocal(p.ctx(), "orders", 0, []storage.Record{{Payload: []byte("after")}}); err != nil {
		t.Fatalf("the source takes no commit after a failed move: %v", err)
	}
}

// A flip whose answer was lost but which did happen: the session asks the
// leader and keeps the copy (dropping it would lose the partition).
func TestSessionLostFlipAnswerKeepsTheCopy(t *testing.T) {
	p := newPair(t)
	p.fill(50)
	p.remote.flipErr, p.remote.flipDoes = errors.New("connection reset"), true
	if err := p.w.session(p.ctx(), p.target()); err != nil {
		t.Fatalf("the flip happened, the session says %v", err)
	}
	l, err := p.dst.Registry().Get("orders", 0)
	if err != nil || l.HWM() != 50 {
		t.Fatalf("the copy after a lost flip answer: %v %v", l, err)
	}
}

// If the source's high watermark moved between the copy and the flip (a
// lapsed freeze let a commit in), the session gives up before installing.
func TestSessionAbortsWhenTheSourceMoved(t *testing.T) {
	p := newPair(t)
	p.fill(50)
	p.remote.hwmShift = 1
	if err := p.w.session(p.ctx(), p.target()); err == nil {
		t.Fatal("a copy missing a record was installed")
	}
	if a := p.ms.Assignments("orders")[0]; a.Owner != "src" {
		t.Fatalf("ownership flipped: %+v", a)
	}
	if _, err := os.Stat(p.dstDir()); !os.IsNotExist(err) {
		t.Fatalf("something was installed: %v", err)
	}
}

// A freeze belongs to the session that set it last: another session's
// late thaw leaves it; an expiry sweep lifts only the freeze it saw expire;
// the marker on disk follows.
func TestFreezeHoldersAndExpiry(t *testing.T) {
	p := newPair(t)
	p.fill(10)
	commit := func() error {
		return p.src.CommitLocal(p.ctx(), "orders", 0, []storage.Record{{Payload: []byte("x")}})
	}
	srcDir, _ := p.src.Registry().Dir("orders", 0)
	marker := filepath.Join(srcDir, "moving")
	if _, err := p.src.Freeze("orders", 0, time.Hour, "A"); err != nil {
		t.Fatal(err)
	}
	if commit() == nil {
		t.Fatal("a frozen partition took a commit")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("no marker while frozen: %v", err)
	}
	if _, err := p.src.Freeze("orders", 0, time.Hour, "B"); err != nil { // B renews it: B's now
		t.Fatal(err)
	}
	if ok, _ := p.src.Thaw("orders", 0, "A"); ok || commit() == nil {
		t.Fatal("an earlier session's thaw lifted a freeze another session holds")
	}
	if len(p.src.ExpiredFreezes()) != 0 {
		t.Fatal("a live freeze listed as expired")
	}
	// Expiry: only the very freeze seen expired is lifted.
	if _, err := p.src.Freeze("orders", 0, time.Nanosecond, "B"); err != nil {
		t.Fatal(err)
	}
	seen := p.src.ExpiredFreezes()
	if len(seen) != 1 {
		t.Fatalf("expired freezes %v", seen)
	}
	if _, err := p.src.Freeze("orders", 0, time.Nanosecond, "C"); err != nil { // renewed after the sweep looked
		t.Fatal(err)
	}
	if ok, _ := p.src.LiftExpired(seen[0]); ok || commit() == nil {
		t.Fatal("the sweep lifted a freeze renewed after it looked")
	}
	if ok, err := p.src.LiftExpired(p.src.ExpiredFreezes()[0]); !ok || err != nil {
		t.Fatalf("lifting the expired freeze: %v %v", ok, err)
	}
	if err := commit(); err != nil {
		t.Fatalf("a thawed partition refuses commits: %v", err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the marker outlived the freeze: %v", err)
	}
}
