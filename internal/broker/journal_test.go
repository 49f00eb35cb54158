package broker

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

func (n *testNode) commitLazy(topic string, p int, firstSeq uint64, payloads ...string) storage.Flusher {
	n.t.Helper()
	recs := make([]storage.Record, len(payloads))
	seqs := make([]uint64, len(payloads))
	for i, s := range payloads {
		recs[i].Payload, seqs[i] = []byte(s), firstSeq+uint64(i)
	}
	f, err := n.b.Commit(context.Background(), topic, 0, p, recs, storage.Source{Origin: 99, Seqs: seqs, Lazy: true})
	if err != nil || f == nil {
		n.t.Fatalf("lazy commit: %v %v", f, err)
	}
	return f
}

// While the dispatcher says a partition may be owed its WAL tail, commits
// from elsewhere (forwarded, fan-out, reroutes) are refused as temporarily
// unavailable; the dispatcher's own sourced commits and other partitions
// go through.
func TestReplayGateRefusesCommitsFromElsewhere(t *testing.T) {
	var replaying atomic.Bool
	replaying.Store(true)
	n := newTestNode(t, Config{ReplayGate: func(topic string, p int) bool { return replaying.Load() && p == 0 }})
	n.createTopic("orders", 2)
	if err := n.commit("orders", 0, "fwd"); !errors.Is(err, refusal.ErrUnavailable) || apierr.Status(err) != http.StatusServiceUnavailable {
		t.Fatalf("commit into a replaying partition: %v", err)
	}
	if err := n.commit("orders", 1, "fwd"); err != nil {
		t.Fatal(err)
	}
	n.commitLazy("orders", 0, 1, "own")
	replaying.Store(false)
	if err := n.commit("orders", 0, "fwd"); err != nil {
		t.Fatal(err)
	}
}

// The consumer frontier file never passes the flushed high watermark: a
// persist flushes lazily committed records first, and when that flush
// fails the frontier is held back to what is on disk (redelivery after a
// power cut, never a skip).
func TestFrontierNeverPersistedPastFlushed(t *testing.T) {
	n := newTestNode(t, Config{HWMPersistPeriod: time.Hour, FrontierPersist: time.Hour})
	n.createTopic("orders", 1)
	if err := n.commit("orders", 0, "a"); err != nil {
		t.Fatal(err)
	}
	n.commitLazy("orders", 0, 1, "b", "c")
	ackAll := func() {
		msgs, err := n.consume("orders", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := n.b.Ack(context.Background(), "orders", m.ReceiptHandle, Settle); err != nil {
				t.Fatal(err)
			}
		}
	}
	ackAll()
	dir := n.partDir("orders", 0)
	frontier := func() uint64 {
		f, _, err := storage.ReadOffsetFileFS(n.fs, filepath.Join(dir, storage.ConsumerOffsetFile))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	n.b.upkeep.persistFrontiers()
	l := n.b.parts.Peek("orders", 0)
	if f := frontier(); f != 3 || l.Flushed() != 3 {
		t.Fatalf("frontier %d flushed %d, want both 3 (flushed first)", f, l.Flushed())
	}
	n.commitLazy("orders", 0, 3, "d", "e")
	ackAll()
	n.fs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.EIO})
	n.b.upkeep.persistFrontiers()
	if f := frontier(); f != 3 {
		t.Fatalf("frontier file %d passed the flushed high watermark %d", f, l.Flushed())
	}
}

// A sourced commit through the dedupe window: the kept records keep their
// own WAL seqs (a duplicate msg id dropped from the middle of the batch),
// and a re-dispatch of the batch is skipped by seq.
func TestSourcedCommitThroughTheDedupeWindow(t *testing.T) {
	n := newTestNode(t, Config{})
	window := int64(60_000)
	if _, err := n.b.CreateTopic(testCtx(t), CreateTopicRequest{Name: "orders", Partitions: 1, DedupeWindowMs: &window}, ""); err != nil {
		t.Fatal(err)
	}
	commit := func() {
		t.Helper()
		src := storage.Source{Origin: 99, Seqs: []uint64{10, 11, 12}, Lazy: true}
		if _, err := n.b.Commit(context.Background(), "orders", 0, 0, idRecs("a", "a", "b"), src); err != nil {
			t.Fatal(err)
		}
	}
	commit()
	commit() // the re-dispatch after a crash
	l := n.b.parts.Peek("orders", 0)
	if l.HWM() != 2 {
		t.Fatalf("hwm %d, want the two distinct ids once", l.HWM())
	}
	if _, skipped, err := l.CommitFrom(idRecs("c"), storage.Source{Origin: 99, Seqs: []uint64{12}}); err != nil || skipped != 1 {
		t.Fatalf("seq 12 (the kept b) not held: skipped %d, %v", skipped, err)
	}
}
