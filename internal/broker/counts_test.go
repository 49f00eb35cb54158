package broker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// pinnedNow is a clock a test moves by hand (Config.Now).
type pinnedNow struct {
	mu sync.Mutex
	t  time.Time
}

func (p *pinnedNow) now() time.Time { p.mu.Lock(); defer p.mu.Unlock(); return p.t }
func (p *pinnedNow) advance(d time.Duration) {
	p.mu.Lock()
	p.t = p.t.Add(d)
	p.mu.Unlock()
}

// deliverAndNack leases topic/0's next record and nacks it, returning the
// delivery_count the consume reported.
func deliverAndNack(t *testing.T, n *testNode, topic string) int {
	t.Helper()
	msgs, err := n.consume(topic, 0, 1)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("consume: %v %v", payloadsOf(msgs), err)
	}
	if err := n.b.Ack(context.Background(), topic, msgs[0].ReceiptHandle, Nack); err != nil {
		t.Fatal(err)
	}
	return msgs[0].DeliveryCount
}

func nextDeliveryCount(t *testing.T, n *testNode, topic string) int {
	t.Helper()
	msgs, err := n.consume(topic, 0, 1)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("consume: %v %v", payloadsOf(msgs), err)
	}
	return msgs[0].DeliveryCount
}

// A clean stop loses no delivery count: a record delivered three times is
// delivered a fourth time after a restart and says so (it said 1 before
// the counts were persisted).
func TestDeliveryCountSurvivesACleanRestart(t *testing.T) {
	n := newTestNode(t, Config{FrontierPersist: time.Hour}) // only Close persists
	n.createTopic("jobs", 1)
	if err := n.commit("jobs", 0, "poison"); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 3; want++ {
		if got := deliverAndNack(t, n, "jobs"); got != want {
			t.Fatalf("delivery %d says %d", want, got)
		}
	}
	n.restart(nil)
	if got := nextDeliveryCount(t, n, "jobs"); got != 4 {
		t.Fatalf("first delivery after a clean restart says %d, want 4", got)
	}
	if v := n.metric("narad_delivery_counts_restored_total"); v != 1 {
		t.Fatalf("delivery_counts_restored_total = %v", v)
	}
	// A lease out at the stop counts too: that delivery happened.
	n.restart(nil)
	if got := nextDeliveryCount(t, n, "jobs"); got != 5 {
		t.Fatalf("after a restart with the lease out: %d, want 5", got)
	}
}

// The sweep writes the counts at most every hosted.CountsEvery and always after
// the frontier, dropping settled records: what a crash finds is the last
// write, at most hosted.CountsEvery plus one sweep old.
func TestDeliveryCountsWrittenOnTheSweepsCadence(t *testing.T) {
	clk := &pinnedNow{t: time.Unix(1_700_000_000, 0)}
	n := newTestNode(t, Config{FrontierPersist: time.Hour, Now: clk.now})
	n.createTopic("jobs", 1)
	if err := n.commit("jobs", 0, "a", "b"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(n.partDir("jobs", 0), storage.DeliveryCountsFile)
	read := func() []storage.CountEntry {
		t.Helper()
		es, _, err := storage.ReadDeliveryCountsFS(vfs.Default, path)
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	deliverAndNack(t, n, "jobs")
	deliverAndNack(t, n, "jobs")
	n.b.upkeep.persistFrontiers()
	if es := read(); es != nil {
		t.Fatalf("written %v before hosted.CountsEvery passed since the queue loaded", es)
	}
	clk.advance(hosted.CountsEvery)
	n.b.upkeep.persistFrontiers()
	if es := read(); len(es) != 1 || es[0] != (storage.CountEntry{Offset: 0, Count: 2}) {
		t.Fatalf("after hosted.CountsEvery: %v, want offset 0 delivered twice", es)
	}
	deliverAndNack(t, n, "jobs") // 3
	clk.advance(hosted.CountsEvery - time.Millisecond)
	n.b.upkeep.persistFrontiers()
	if es := read(); es[0].Count != 2 {
		t.Fatalf("rewritten within hosted.CountsEvery: %v", es)
	}
	clk.advance(time.Millisecond)
	n.b.upkeep.persistFrontiers()
	if es := read(); es[0].Count != 3 {
		t.Fatalf("not rewritten once hosted.CountsEvery passed: %v", es)
	}
	// Settle offset 0: its count leaves the file; offset 1 is leased.
	msgs, _ := n.consume("jobs", 0, 2)
	if len(msgs) != 2 {
		t.Fatalf("consume: %v", payloadsOf(msgs))
	}
	if err := n.b.Ack(context.Background(), "jobs", msgs[0].ReceiptHandle, Settle); err != nil {
		t.Fatal(err)
	}
	clk.advance(hosted.CountsEvery)
	n.b.upkeep.persistFrontiers()
	if es := read(); len(es) != 1 || es[0] != (storage.CountEntry{Offset: 1, Count: 1}) {
		t.Fatalf("after settling offset 0: %v", es)
	}
}

// twiceDeliveredThenStopped is a node whose jobs/0 holds one record
// delivered (and nacked) twice, stopped cleanly: its counts file says 2.
func twiceDeliveredThenStopped(t *testing.T) *testNode {
	t.Helper()
	n := newTestNode(t, Config{FrontierPersist: time.Hour})
	n.createTopic("jobs", 1)
	if err := n.commit("jobs", 0, "a"); err != nil {
		t.Fatal(err)
	}
	deliverAndNack(t, n, "jobs")
	deliverAndNack(t, n, "jobs")
	n.b.Close()
	return n
}

// A counts file that cannot be read does not stop the partition: logged,
// counted, and the records start from no counts.
func TestDamagedCountsFileStartsFromZero(t *testing.T) {
	n := twiceDeliveredThenStopped(t)
	path := filepath.Join(n.partDir("jobs", 0), storage.DeliveryCountsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-2], 0o644); err != nil { // torn
		t.Fatal(err)
	}
	n.start()
	if got := nextDeliveryCount(t, n, "jobs"); got != 1 {
		t.Fatalf("delivery after a damaged counts file says %d, want 1", got)
	}
	if v := n.metric(`narad_errors_total{component="broker",kind="delivery_counts_file"}`); v != 1 {
		t.Fatalf("errors_total{broker,delivery_counts_file} = %v", v)
	}
	if !strings.Contains(n.logs.String(), "delivery counts file unreadable") {
		t.Fatalf("not logged:\n%s", n.logs)
	}
}

// A counts file whose read fails (EIO) is not a damaged one: the queue is
// not loaded (consume answers 503 naming no path), the file is left as it
// is, and once it reads the record's count goes on (3 after 2 deliveries).
// Starting from no counts would let the next write replace the good file.
func TestCountsFileReadErrorKeepsTheCounts(t *testing.T) {
	n := twiceDeliveredThenStopped(t)
	n.start()
	eio := n.fs.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: storage.DeliveryCountsFile, Err: syscall.EIO})
	_, err := n.consume("jobs", 0, 1)
	n.want503("consume while the counts file cannot be read", err, "delivery counts", "input/output error")
	eio.Remove()
	if got := nextDeliveryCount(t, n, "jobs"); got != 3 {
		t.Fatalf("delivery once the counts file reads says %d, want 3", got)
	}
}

// A counts write that fails (full disk) is logged and counted, leaves the
// frontier written and the old file in place, and the next sweep writes
// once the disk takes it.
func TestCountsWriteFailureIsRetried(t *testing.T) {
	clk := &pinnedNow{t: time.Unix(1_700_000_000, 0)}
	n := newTestNode(t, Config{FrontierPersist: time.Hour, Now: clk.now})
	n.createTopic("jobs", 1)
	if err := n.commit("jobs", 0, "a", "b"); err != nil {
		t.Fatal(err)
	}
	dir := n.partDir("jobs", 0)
	for _, op := range []errorfs.Op{errorfs.OpWrite, errorfs.OpSync, errorfs.OpRename} {
		deliverAndNack(t, n, "jobs")
		fault := n.fs.Inject(errorfs.Rule{Ops: op, Path: storage.DeliveryCountsFile, Err: syscall.ENOSPC})
		clk.advance(hosted.CountsEvery)
		n.b.upkeep.persistFrontiers()
		if fault.Fired() == 0 {
			t.Fatalf("%v: the fault never fired", op)
		}
		fault.Remove()
		es, _, err := storage.ReadDeliveryCountsFS(vfs.Default, filepath.Join(dir, storage.DeliveryCountsFile))
		if err != nil {
			t.Fatalf("%v: a failed write left a damaged file: %v", op, err)
		}
		before := es
		clk.advance(hosted.CountsEvery)
		n.b.upkeep.persistFrontiers()
		es, _, _ = storage.ReadDeliveryCountsFS(vfs.Default, filepath.Join(dir, storage.DeliveryCountsFile))
		if len(es) != 1 || len(before) == 1 && before[0].Count == es[0].Count {
			t.Fatalf("%v: not rewritten after the fault healed: %v then %v", op, before, es)
		}
	}
	if v := n.metric(`narad_errors_total{component="broker",kind="counts_persist"}`); v < 3 {
		t.Fatalf("errors_total{broker,counts_persist} = %v", v)
	}
	// Ack both: the frontier moves and is written even while counts fail.
	n.fs.Inject(errorfs.Rule{Ops: errorfs.OpRename, Path: storage.DeliveryCountsFile, Err: syscall.EIO})
	msgs, _ := n.consume("jobs", 0, 2)
	for _, m := range msgs {
		if err := n.b.Ack(context.Background(), "jobs", m.ReceiptHandle, Settle); err != nil {
			t.Fatal(err)
		}
	}
	clk.advance(hosted.CountsEvery)
	n.b.upkeep.persistFrontiers()
	if f, _, err := storage.ReadOffsetFile(filepath.Join(dir, storage.ConsumerOffsetFile)); err != nil || f != 2 {
		t.Fatalf("frontier file %d %v, want 2", f, err)
	}
	n.fs.Clear()
}

// The partition's move freeze (PersistFrontier) writes the counts however
// young, so the copy a move takes carries them.
func TestPersistFrontierWritesTheCounts(t *testing.T) {
	n := newTestNode(t, Config{FrontierPersist: time.Hour})
	n.createTopic("jobs", 1)
	if err := n.commit("jobs", 0, "a"); err != nil {
		t.Fatal(err)
	}
	deliverAndNack(t, n, "jobs")
	deliverAndNack(t, n, "jobs")
	if err := n.b.parts.PersistFrontier("jobs", 0); err != nil {
		t.Fatal(err)
	}
	es, _, err := storage.ReadDeliveryCountsFS(vfs.Default, filepath.Join(n.partDir("jobs", 0), storage.DeliveryCountsFile))
	if err != nil || len(es) != 1 || es[0].Count != 2 {
		t.Fatalf("counts after PersistFrontier: %v %v", es, err)
	}
}
