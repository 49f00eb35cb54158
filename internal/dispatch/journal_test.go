package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
	"github.com/narad-io/narad/internal/wal"
)

// logNode is a node's data dir on a crashable FS: the WAL and real
// partition logs of one topic, committed to through the sourced seam the
// way the broker does.
type logNode struct {
	dir  string
	fs   *errorfs.FS
	w    *wal.WAL
	mu   sync.Mutex
	logs map[int]*storage.Log
	// holdFlush makes every Flush fail: lazy tails stay unflushed and the
	// checkpoint waits for them.
	holdFlush atomic.Bool
}

type heldFlusher struct {
	n *logNode
	l *storage.Log
}

func (h heldFlusher) Flush() error {
	if h.n.holdFlush.Load() {
		return errors.New("flush held by the test")
	}
	return h.l.Flush()
}

func (n *logNode) log(t *testing.T, p int) *storage.Log {
	n.mu.Lock()
	defer n.mu.Unlock()
	if l := n.logs[p]; l != nil {
		return l
	}
	l, err := storage.Open(filepath.Join(n.dir, "t", storage.PartitionDirName(p)), storage.Options{FS: n.fs})
	if err != nil {
		t.Fatal(err)
	}
	n.logs[p] = l
	return l
}

func openNode(t *testing.T, dir string, fsys *errorfs.FS) *logNode {
	w, err := wal.Open(filepath.Join(dir, "ingress"), wal.Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	n := &logNode{dir: dir, fs: fsys, w: w, logs: map[int]*storage.Log{}}
	for p := 0; p < 2; p++ {
		n.log(t, p)
	}
	return n
}

type nodeCommitter struct {
	t *testing.T
	n *logNode
}

func (c nodeCommitter) Commit(_ context.Context, _ string, _ uint64, p int, recs []storage.Record) error {
	_, err := c.n.log(c.t, p).Commit(recs)
	return err
}

func (c nodeCommitter) CommitSourced(_ context.Context, _ string, _ uint64, p int, recs []storage.Record, src storage.Source) (storage.Flusher, error) {
	l := c.n.log(c.t, p)
	if _, _, err := l.CommitFrom(recs, src); err != nil || !src.Lazy {
		return nil, err
	}
	return heldFlusher{c.n, l}, nil
}

func runDispatcher(t *testing.T, n *logNode, lazy bool) (*Dispatcher, func()) {
	d := &Dispatcher{WAL: n.w, Commit: nodeCommitter{t, n}, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Backoff: 20 * time.Millisecond, Partitions: func(string) int { return 2 }, Lazy: lazy,
		Discard: func(context.Context, string, uint64) bool { return false }}
	return d, run(d)
}

// run runs d until the returned stop is called.
func run(d *Dispatcher) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	return func() { cancel(); <-done }
}

// seen reads every record of both partitions: payload -> "p/offset".
func (n *logNode) seen(t *testing.T) map[string]string {
	out := map[string]string{}
	for at, payload := range n.positions(t) {
		if prev, dup := out[payload]; dup {
			t.Fatalf("%s twice: at %s and %s", payload, prev, at)
		}
		out[payload] = at
	}
	return out
}

// positions reads every record of both partitions: "p/offset" -> payload.
// Unlike seen it allows a payload twice: a rerouted record may be
// committed again after a crash.
func (n *logNode) positions(t *testing.T) map[string]string {
	out := map[string]string{}
	for p := 0; p < 2; p++ {
		l := n.log(t, p)
		for from := uint64(0); from < l.HWM(); {
			res, err := l.Read(from, 1000, 1<<30, storage.NoDueLimit)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Records {
				out[fmt.Sprintf("%d/%d", p, r.Offset)] = string(r.Payload)
			}
			from = res.Next
		}
	}
	return out
}

func (n *logNode) total() uint64 { return n.logs[0].HWM() + n.logs[1].HWM() }

func (n *logNode) produce(t *testing.T, from, count int) {
	for i := from; i < from+count; i++ {
		r := wal.Record{Topic: "t", Partition: int32(i % 2), Payload: []byte(fmt.Sprintf("r%03d", i))}
		if err := n.w.Append(context.Background(), []wal.Record{r}); err != nil {
			t.Fatal(err)
		}
	}
}

// powerCut stops everything the way a power loss does: nothing that was
// not fdatasynced survives (every later sync fails, so closing writes
// nothing durable either), then the unsynced writes are dropped.
func (n *logNode) powerCut(t *testing.T) {
	n.fs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Err: syscall.EIO})
	for _, l := range n.logs {
		l.Close()
	}
	n.w.Close()
	n.fs.Clear()
	if err := n.fs.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
}

func (n *logNode) close() {
	for _, l := range n.logs {
		l.Close()
	}
	n.w.Close()
}

// The power-cut rule: records committed lazily (visible, not fdatasynced
// in their partition) are lost from the partition logs by a power cut,
// and the WAL — not released past them — puts each back at the offset a
// reader saw, exactly once; records flushed before are not repeated.
func TestPowerCutRedispatchesTheLazyTailAtTheSameOffsets(t *testing.T) {
	dir := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	n := openNode(t, dir, fsys)
	_, stop := runDispatcher(t, n, true)
	n.produce(t, 0, 20)
	waitFor(t, "the first records flushed and checkpointed", func() bool { return n.w.Checkpoint() == 21 })
	n.holdFlush.Store(true)
	n.produce(t, 20, 30)
	waitFor(t, "every record visible", func() bool { return n.total() == 50 })
	before := n.seen(t)
	if n.w.Checkpoint() != 21 {
		t.Fatalf("checkpoint %d passed records not flushed in their partition", n.w.Checkpoint())
	}
	if f := n.logs[0].Flushed() + n.logs[1].Flushed(); f != 20 {
		t.Fatalf("flushed %d, want the 20 of before the hold (the rest lazily)", f)
	}
	stop()
	n.powerCut(t)

	n = openNode(t, dir, errorfs.New(vfs.Default))
	defer n.close()
	if got := n.total(); got != 20 {
		t.Fatalf("after the cut the logs hold %d records, want the 20 flushed", got)
	}
	d, stop := runDispatcher(t, n, true)
	defer stop()
	waitFor(t, "the lazy tail re-dispatched", func() bool { return n.total() == 50 && !d.Replaying("t", 0) })
	after := n.seen(t)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("records moved or changed:\n before %v\n after  %v", before, after)
	}
}

// A crash (SIGKILL: the page cache survives) after a commit and before the
// checkpoint re-reads records the logs hold: they are skipped by WAL seq,
// not committed twice. Without lazy commits too.
func TestCrashRedispatchSkipsWhatTheLogsHold(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprint("lazy=", lazy), func(t *testing.T) {
			dir := t.TempDir()
			n := openNode(t, dir, errorfs.New(vfs.Default))
			_, stop := runDispatcher(t, n, lazy)
			n.holdFlush.Store(true)
			// Keep the checkpoint where it is: a failing checkpoint write is
			// the crash window, held open.
			in := n.fs.Inject(errorfs.Rule{Ops: errorfs.OpRename, Path: "checkpoint", Err: syscall.EIO})
			n.produce(t, 0, 30)
			waitFor(t, "every record visible", func() bool { return n.total() == 30 })
			before := n.seen(t)
			stop()
			in.Remove()
			if n.w.Checkpoint() != 1 {
				t.Fatalf("checkpoint moved to %d", n.w.Checkpoint())
			}
			n.close() // the page cache survives a SIGKILL: the files are as written

			n = openNode(t, dir, errorfs.New(vfs.Default))
			defer n.close()
			_, stop = runDispatcher(t, n, lazy)
			defer stop()
			waitFor(t, "the checkpoint past the re-read records", func() bool { return n.w.Checkpoint() == 31 })
			if got := n.total(); got != 30 {
				t.Fatalf("logs hold %d records after the re-dispatch, want 30", got)
			}
			if fmt.Sprint(n.seen(t)) != fmt.Sprint(before) {
				t.Fatal("records moved")
			}
		})
	}
}

// Replaying holds every partition until the records of before the start
// were read and tried, and a partition whose records of then still fail
// after that.
func TestReplayingHoldsUntilTheBootRecordsAreIn(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, errorfs.New(vfs.Default))
	n.produce(t, 0, 4)
	n.close()
	n = openNode(t, dir, errorfs.New(vfs.Default))
	defer n.close()
	fail := &failingCommitter{nodeCommitter: nodeCommitter{t, n}}
	fail.failing.Store(true)
	d := &Dispatcher{WAL: n.w, Commit: fail, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Backoff: 20 * time.Millisecond, Partitions: func(string) int { return 2 }, Lazy: true,
		Discard: func(context.Context, string, uint64) bool { return false }}
	if !d.Replaying("t", 0) || !d.Replaying("other", 3) {
		t.Fatal("not replaying before Run")
	}
	defer run(d)()
	waitFor(t, "the boot records read", func() bool { return !d.Replaying("other", 3) })
	if !d.Replaying("t", 1) {
		t.Fatal("a partition whose boot records fail is not held")
	}
	fail.failing.Store(false)
	waitFor(t, "the held partition released", func() bool { return !d.Replaying("t", 1) && !d.Replaying("t", 0) })
}

type failingCommitter struct {
	nodeCommitter
	failing atomic.Bool
}

func (c *failingCommitter) CommitSourced(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record, src storage.Source) (storage.Flusher, error) {
	if c.failing.Load() && p == 1 {
		return nil, errors.New("partition 1 down")
	}
	return c.nodeCommitter.CommitSourced(ctx, topic, inc, p, recs, src)
}

// recordingCommitter notes how each partition's commits were made.
type recordingCommitter struct {
	failingCommitter
	mu  sync.Mutex
	how []string // "p<n> plain|sync|lazy"
}

func (c *recordingCommitter) note(s string) {
	c.mu.Lock()
	c.how = append(c.how, s)
	c.mu.Unlock()
}

func (c *recordingCommitter) Commit(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
	c.note(fmt.Sprintf("p%d plain", p))
	return c.nodeCommitter.Commit(ctx, topic, inc, p, recs)
}

func (c *recordingCommitter) CommitSourced(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record, src storage.Source) (storage.Flusher, error) {
	f, err := c.failingCommitter.CommitSourced(ctx, topic, inc, p, recs, src)
	if err == nil {
		c.note(fmt.Sprintf("p%d %s", p, map[bool]string{true: "lazy", false: "sync"}[src.Lazy]))
	}
	return f, err
}

func (c *recordingCommitter) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.how...)
}

// A bucket rerouted to a sibling goes there plainly (no source: the
// sibling's held seq speaks only of its own records), and its own
// partition commits synchronously until the checkpoint passes what was
// rerouted: a lost lazy tail there could otherwise be re-dispatched
// behind the rerouted records after a power cut, at other offsets.
func TestRerouteIsPlainAndMakesItsPartitionSync(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, errorfs.New(vfs.Default))
	defer n.close()
	rc := &recordingCommitter{failingCommitter: failingCommitter{nodeCommitter: nodeCommitter{t, n}}}
	rc.failing.Store(true)
	var reroute atomic.Bool
	reroute.Store(true)
	d := &Dispatcher{WAL: n.w, Commit: rc, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Backoff: 20 * time.Millisecond, Partitions: func(string) int { return 2 }, Lazy: true,
		Discard: func(context.Context, string, uint64) bool { return false },
		Reroute: func(_ string, p int32, fails int) (int32, bool) { return 0, reroute.Load() && p == 1 && fails >= 1 }}
	n.holdFlush.Store(true) // the checkpoint stays below the rerouted records
	defer run(d)()
	n.produce(t, 0, 2) // r000 -> p0 (lazy), r001 -> p1 (fails, then rerouted to p0)
	waitFor(t, "the reroute", func() bool { return n.logs[0].HWM() == 2 })
	reroute.Store(false)
	rc.failing.Store(false)
	n.produce(t, 2, 2) // r002 -> p0, r003 -> p1: p1 now synchronous
	waitFor(t, "the later records", func() bool { return n.logs[1].HWM() == 1 && n.logs[0].HWM() == 3 })
	got := fmt.Sprint(rc.snapshot())
	if got != "[p0 lazy p0 plain p0 lazy p1 sync]" && got != "[p0 lazy p0 plain p1 sync p0 lazy]" {
		t.Fatalf("commits %s", got)
	}
}

// The boundary of the reroute rule: a partition commits lazily again only
// once the checkpoint is past its last rerouted record, not when it is at
// it. The checkpoint names the first record a restart re-reads, so a
// rerouted record exactly at the checkpoint is re-dispatched after a power
// cut, this time to its own partition, and would land ahead of a lazy
// tail that was lost there, moving every offset of it a reader saw.
func TestCheckpointAtTheLastReroutedRecordKeepsItsPartitionSync(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, dir, errorfs.New(vfs.Default))
	fc := &failingCommitter{nodeCommitter: nodeCommitter{t, n}}
	fc.failing.Store(true)
	var reroute atomic.Bool
	d := &Dispatcher{WAL: n.w, Commit: fc, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Backoff: 20 * time.Millisecond, Partitions: func(string) int { return 2 }, Lazy: true,
		Discard: func(context.Context, string, uint64) bool { return false },
		Reroute: func(_ string, p int32, fails int) (int32, bool) { return 0, reroute.Load() && p == 1 && fails >= 1 }}
	stop := run(d)
	n.produce(t, 0, 2) // seq 1: r000 -> p0; seq 2: r001 -> p1, which fails
	// r001 waiting holds the checkpoint at its seq, 2.
	waitFor(t, "the checkpoint at the waiting record", func() bool { return n.w.Checkpoint() == 2 })
	// Keep it there: r001 is about to be rerouted, and the checkpoint must
	// stay exactly at its seq, the last rerouted one.
	n.fs.Inject(errorfs.Rule{Ops: errorfs.OpRename, Path: "checkpoint", Err: syscall.EIO})
	reroute.Store(true)
	waitFor(t, "r001 rerouted to p0", func() bool { return n.logs[0].HWM() == 2 })
	reroute.Store(false)
	fc.failing.Store(false)
	n.holdFlush.Store(true) // nothing lazy gets flushed from here on
	n.produce(t, 2, 2)      // seq 3: r002 -> p0; seq 4: r003 -> p1
	waitFor(t, "the later records", func() bool { return n.logs[0].HWM() == 3 && n.logs[1].HWM() == 1 })
	if n.w.Checkpoint() != 2 {
		t.Fatalf("checkpoint %d, want 2: the test needs it exactly at the rerouted record", n.w.Checkpoint())
	}
	before := n.positions(t)
	stop()
	n.powerCut(t)

	n = openNode(t, dir, errorfs.New(vfs.Default))
	defer n.close()
	if n.w.Checkpoint() != 2 {
		t.Fatalf("checkpoint %d after the power cut, want 2", n.w.Checkpoint())
	}
	_, stop = runDispatcher(t, n, true)
	defer stop()
	waitFor(t, "the WAL re-dispatched", func() bool { return n.w.Checkpoint() == n.w.LastSeq()+1 })
	after := n.positions(t)
	// r001 may now be in p1 too (a rerouted record may repeat after a
	// crash), but nothing a reader saw may have moved or vanished.
	for at, payload := range before {
		if after[at] != payload {
			t.Errorf("%s held %s before the power cut and %q after", at, payload, after[at])
		}
	}
}
