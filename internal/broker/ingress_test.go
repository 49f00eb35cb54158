package broker_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/dispatch"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
	"github.com/narad-io/narad/internal/wal"
)

// node is a one-node broker whose ingress WAL runs on an errorfs, with
// the dispatcher draining it into the partition logs as in a server (the
// same route and leader-confirmed discard rule).
type node struct {
	dir string
	ms  *meta.Store
	w   *wal.WAL
	b   *broker.Broker
	m   *metrics.Metrics
	efs *errorfs.FS
	d   *dispatch.Dispatcher

	stopDispatch func()
}

// newNode builds the node; the dispatcher runs once startDispatch is
// called (newNode calls it unless held).
func newNode(t *testing.T, held bool) *node {
	t.Helper()
	dir := t.TempDir()
	ms := metatest.Leader(t, dir, "n1")
	efs := errorfs.New(vfs.Default)
	w, err := wal.Open(filepath.Join(dir, "ingress"), wal.Options{FS: efs, HealInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	b := broker.New(broker.Config{DataDir: dir, NodeID: "n1", DefaultPartitions: 1, MaxPartitions: 8,
		DefaultRetentionMs: 3_600_000, DefaultVisibilityMs: 30_000, DefaultMaxInFlight: 1024, DefaultMaxAckedAhead: 1024,
		Logger: slog.New(slog.DiscardHandler)}, ms, w, m)
	b.Start()
	b.OpenCreateGate()
	n := &node{dir: dir, ms: ms, w: w, b: b, m: m, efs: efs}
	n.d = &dispatch.Dispatcher{WAL: w, Commit: &route.Router{Self: "n1", Owner: ms.Owner, Local: b.Commit},
		Metrics: m, Logger: slog.New(slog.DiscardHandler), Backoff: 20 * time.Millisecond,
		Discard:    dispatch.LeaderDiscarder(ms),
		Partitions: func(topic string) int { t, _ := ms.Topic(topic); return t.Partitions }}
	t.Cleanup(func() {
		if n.stopDispatch != nil {
			n.stopDispatch()
		}
		b.Close()
		w.Close()
	})
	if !held {
		n.startDispatch()
	}
	return n
}

func (n *node) startDispatch() {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.d.Run(ctx) }()
	n.stopDispatch = func() { stop(); <-done }
}

// consumeAll replays partition 0 of topic from offset 0 until want
// payloads arrived (or the deadline passes).
func (n *node) consumeAll(t *testing.T, topic string, want int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, off := 0, uint64(0)
		msgs, err := n.b.Consume(context.Background(), broker.ConsumeRequest{Topic: topic, Partition: &p, Offset: &off, Max: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) >= want || time.Now().After(deadline) {
			out := make([]string, len(msgs))
			for i, m := range msgs {
				out[i] = string(m.Payload)
			}
			return out
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A full disk under the ingress WAL: produce answers 503 with a
// Retry-After and a sentence that names no file, the node stays usable,
// and produce resumes by itself once space exists; every acknowledged
// record reaches its partition, none of the refused ones do.
func TestProduceOnAFullDiskAnswers503AndResumes(t *testing.T) {
	n := newNode(t, false)
	ctx := context.Background()
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "orders"}, ""); err != nil {
		t.Fatal(err)
	}
	var acked []string
	produce := func(i int) error {
		p := fmt.Sprintf("rec-%d", i)
		err := n.b.Produce(ctx, "orders", broker.ProduceRecord{Payload: []byte(p)})
		if err == nil {
			acked = append(acked, p)
		}
		return err
	}
	for i := range 10 {
		if err := produce(i); err != nil {
			t.Fatal(err)
		}
	}
	full := n.efs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: ".wal", Err: syscall.ENOSPC, Torn: 0.5})
	for i := 10; i < 15; i++ {
		err := produce(i)
		ae, ok := apierr.From(err) // as the client sees it
		if !ok || ae.Status != http.StatusServiceUnavailable || ae.RetryAfter < time.Second || !errors.Is(err, refusal.ErrDiskFull) {
			t.Fatalf("produce on a full disk = %v, want 503 with a Retry-After", err)
		}
		if !strings.Contains(ae.Message, "disk is full") || strings.Contains(ae.Message, n.dir) || strings.Contains(ae.Message, ".wal") {
			t.Fatalf("produce on a full disk says %q: want the reason, and no file of the server's disk", ae.Message)
		}
	}
	if err := n.w.Health(); err != nil {
		t.Fatalf("WAL health %v on a full disk; want nil (every append is tried)", err)
	}
	full.Remove()
	for i := 15; i < 25; i++ {
		if err := produce(i); err != nil {
			t.Fatalf("produce after space was freed: %v", err)
		}
	}
	got := n.consumeAll(t, "orders", len(acked))
	if strings.Join(got, ",") != strings.Join(acked, ",") {
		t.Fatalf("partition holds %v\nwant exactly the acknowledged %v", got, acked)
	}
}

// A failed fdatasync fences the WAL: produce answers 503 naming no file,
// Health reports the fence, and it lifts by itself.
func TestProduceWhileTheWALIsFencedAnswers503(t *testing.T) {
	n := newNode(t, false)
	ctx := context.Background()
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "orders"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := n.b.Produce(ctx, "orders", broker.ProduceRecord{Payload: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	n.efs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".wal", Times: 1, Err: syscall.EIO, LoseUnsynced: true})
	err := n.b.Produce(ctx, "orders", broker.ProduceRecord{Payload: []byte("b")})
	ae, ok := apierr.From(err)
	if !ok || ae.Status != http.StatusServiceUnavailable || strings.Contains(ae.Message, n.dir) || !errors.Is(err, refusal.ErrFenced) {
		t.Fatalf("produce after a failed fdatasync = %v, want 503 naming no file", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n.w.Health() != nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := n.b.Produce(ctx, "orders", broker.ProduceRecord{Payload: []byte("c")}); err != nil {
		t.Fatalf("produce after the heal: %v", err)
	}
	if got := n.consumeAll(t, "orders", 2); strings.Join(got, ",") != "a,c" {
		t.Fatalf("partition holds %v, want [a c]", got)
	}
}

// Records accepted for a topic that is then deleted and re-created while
// they still wait in the ingress WAL (their owner was down) belong to the
// deleted topic: they are discarded under the leader-confirmed rule and
// never appear in the new topic, whose own records commit.
func TestRecordsOfADeletedTopicNeverReachItsReincarnation(t *testing.T) {
	n := newNode(t, true) // the dispatcher is held: as if the owner were down
	ctx := context.Background()
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "orders"}, "alice"); err != nil {
		t.Fatal(err)
	}
	old, _ := n.ms.Topic("orders")
	for _, p := range []string{"old-1", "old-2"} {
		if err := n.b.Produce(ctx, "orders", broker.ProduceRecord{Payload: []byte(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.b.DeleteTopic(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "orders"}, "bob"); err != nil {
		t.Fatal(err)
	}
	if cur, _ := n.ms.Topic("orders"); cur.Incarnation <= old.Incarnation {
		t.Fatalf("re-created topic has incarnation %d, the deleted one %d", cur.Incarnation, old.Incarnation)
	}
	if err := n.b.Produce(ctx, "orders", broker.ProduceRecord{Payload: []byte("new-1")}); err != nil {
		t.Fatal(err)
	}
	n.startDispatch()
	deadline := time.Now().Add(10 * time.Second)
	for n.w.Checkpoint() != n.w.LastSeq()+1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n.w.Checkpoint() != n.w.LastSeq()+1 {
		t.Fatalf("checkpoint %d, last %d: the deleted topic's records were not settled", n.w.Checkpoint(), n.w.LastSeq())
	}
	if got := n.consumeAll(t, "orders", 1); strings.Join(got, ",") != "new-1" {
		t.Fatalf("the re-created topic holds %v, want only [new-1]", got)
	}
}

// The owner's commit checks the incarnation: an earlier one is a deleted
// topic (404), a later one than the replica knows is not an answer yet
// (503), 0 commits to the current one.
func TestCommitIncarnationRefusesAnotherIncarnation(t *testing.T) {
	n := newNode(t, false)
	ctx := context.Background()
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "t"}, ""); err != nil {
		t.Fatal(err)
	}
	cur, _ := n.ms.Topic("t")
	recs := []storage.Record{{Payload: []byte("x")}}
	for _, tc := range []struct {
		inc  uint64
		want int
	}{{cur.Incarnation, 0}, {0, 0}, {cur.Incarnation - 1, http.StatusNotFound}, {cur.Incarnation + 1, http.StatusServiceUnavailable}} {
		_, err := n.b.Commit(ctx, "t", tc.inc, 0, recs, storage.Source{})
		if got := statusOf(err); got != tc.want {
			t.Errorf("commit of incarnation %d (current %d): %v, want status %d", tc.inc, cur.Incarnation, err, tc.want)
		}
	}
}

func statusOf(err error) int {
	if err == nil {
		return 0
	}
	return apierr.Status(err)
}

// Metastore writes that fail on the disk or lose their leader are
// temporary (503 with Retry-After, naming no file), never a 500.
func TestMetastoreDiskAndLeaderLossAnswer503(t *testing.T) {
	n := newNode(t, false)
	for _, err := range []error{
		fmt.Errorf("meta: create_topic: %w", &fs.PathError{Op: "write", Path: filepath.Join(n.dir, "metastore", "raft.db"), Err: syscall.ENOSPC}),
		fmt.Errorf("meta: create_topic: %w: %w", meta.ErrOutcomeUnknown, errors.New("leadership lost while committing log")),
	} {
		got := n.b.MetaErr(err)
		if ae, ok := apierr.From(got); !ok || ae.Status != http.StatusServiceUnavailable ||
			ae.RetryAfter < time.Second || strings.Contains(ae.Message, n.dir) {
			t.Errorf("MetaErr(%v) = %v, want 503 with a Retry-After naming no file", err, got)
		}
	}
}

// Headers travel the whole produce path — edge validation, ingress WAL,
// dispatch, commit — and come back on consume and replay; the broker's
// own records (ProduceReserved) may carry narad- names, a client's may
// not; and they survive a reopen of the partition log.
func TestHeadersTravelFromProduceToConsume(t *testing.T) {
	n := newNode(t, false)
	ctx := context.Background()
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "h"}, ""); err != nil {
		t.Fatal(err)
	}
	hs := []header.Header{{Name: "z", Value: "last"}, {Name: "a", Value: "ü"}}
	if err := n.b.Produce(ctx, "h", broker.ProduceRecord{Payload: []byte("one"), Headers: hs}); err != nil {
		t.Fatal(err)
	}
	if err := n.b.Produce(ctx, "h", broker.ProduceRecord{Payload: []byte("bad"), Headers: []header.Header{{Name: "narad-dlq-topic", Value: "x"}}}); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("a client's narad- header: %v", err)
	}
	own := []header.Header{{Name: "narad-dlq-topic", Value: "orders"}, {Name: "k", Value: "v"}}
	if err := n.b.ProduceReserved(ctx, "h", []broker.ProduceRecord{{Payload: []byte("two"), Headers: own}, {Payload: []byte("three")}}); err != nil {
		t.Fatal(err)
	}
	if got := n.consumeAll(t, "h", 3); len(got) != 3 {
		t.Fatalf("consumed %v", got)
	}
	p, off := 0, uint64(0)
	msgs, err := n.b.Consume(ctx, broker.ConsumeRequest{Topic: "h", Partition: &p, Offset: &off, Max: 10})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("replay: %v %v", msgs, err)
	}
	want := [][]header.Header{{{Name: "a", Value: "ü"}, {Name: "z", Value: "last"}}, own, nil}
	for i, m := range msgs {
		if !slices.Equal(m.Headers, want[i]) {
			t.Errorf("replayed record %d: headers %v, want %v", i, m.Headers, want[i])
		}
	}
	leased, err := n.b.Consume(ctx, broker.ConsumeRequest{Topic: "h", Max: 10})
	if err != nil || len(leased) != 3 {
		t.Fatalf("consume: %v %v", leased, err)
	}
	for i, m := range leased {
		if !slices.Equal(m.Headers, want[i]) {
			t.Errorf("leased record %d: headers %v, want %v", i, m.Headers, want[i])
		}
	}
}

// A commit whose headers the log could not read back is refused before
// the log sees it, whoever inside the broker made it.
func TestCommitRefusesHeadersOverTheStoredCaps(t *testing.T) {
	n := newNode(t, true)
	ctx := context.Background()
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "h"}, ""); err != nil {
		t.Fatal(err)
	}
	bad := []storage.Record{{Payload: []byte("x"), Headers: []header.Header{{Name: "v", Value: strings.Repeat("v", header.MaxValue+1)}}}}
	if _, err := n.b.Commit(ctx, "h", 0, 0, bad, storage.Source{}); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("commit with a 4 KiB + 1 value: %v", err)
	}
	if got := n.consumeAll(t, "h", 0); len(got) != 0 {
		t.Fatalf("the refused commit stored %v", got)
	}
}
