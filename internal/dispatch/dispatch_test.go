package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// fakeCommitter records commits and fails destinations on demand.
type fakeCommitter struct {
	mu      sync.Mutex
	got     map[string][]string // "topic/p" -> payloads in commit order
	calls   map[string]int
	failing map[string]error
}

func newFake() *fakeCommitter {
	return &fakeCommitter{got: map[string][]string{}, calls: map[string]int{}, failing: map[string]error{}}
}

func (f *fakeCommitter) Commit(_ context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
	k := fmt.Sprintf("%s/%d", topic, p)
	if inc != 0 {
		k = fmt.Sprintf("%s@%d/%d", topic, inc, p)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[k]++
	if err := f.failing[k]; err != nil {
		return err
	}
	for _, r := range recs {
		f.got[k] = append(f.got[k], string(r.Payload))
	}
	return nil
}

func (f *fakeCommitter) setFailing(k string, err error) {
	f.mu.Lock()
	f.failing[k] = err
	f.mu.Unlock()
}

func (f *fakeCommitter) snapshot() (map[string][]string, map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	got := map[string][]string{}
	for k, v := range f.got {
		got[k] = append([]string(nil), v...)
	}
	calls := map[string]int{}
	for k, v := range f.calls {
		calls[k] = v
	}
	return got, calls
}

type harness struct {
	w      *wal.WAL
	fc     *fakeCommitter
	cancel context.CancelFunc
	done   chan struct{}
	gone   map[string]bool
	mu     sync.Mutex
}

func start(t *testing.T) *harness {
	t.Helper()
	w, err := wal.Open(t.TempDir(), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{w: w, fc: newFake(), done: make(chan struct{}), gone: map[string]bool{}}
	d := &Dispatcher{WAL: w, Commit: h.fc, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Backoff:    20 * time.Millisecond,
		Partitions: func(string) int { return 4 },
		Discard: func(_ context.Context, topic string, inc uint64) bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			if inc != 0 {
				return h.gone[fmt.Sprintf("%s@%d", topic, inc)]
			}
			return h.gone[topic]
		}}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { defer close(h.done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-h.done; w.Close() })
	return h
}

func (h *harness) append(t *testing.T, topic string, p int32, payloads ...string) {
	t.Helper()
	h.appendInc(t, topic, 0, p, payloads...)
}

func (h *harness) appendInc(t *testing.T, topic string, inc uint64, p int32, payloads ...string) {
	t.Helper()
	recs := make([]wal.Record, len(payloads))
	for i, s := range payloads {
		recs[i] = wal.Record{Topic: topic, Incarnation: inc, Partition: p, Payload: []byte(s)}
	}
	if err := h.w.Append(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCommitsInOrderAndCheckpointsWhenIdle(t *testing.T) {
	h := start(t)
	h.append(t, "a", 0, "a0", "a1")
	h.append(t, "b", 1, "b0")
	h.append(t, "a", 0, "a2")
	waitFor(t, "checkpoint past every record", func() bool { return h.w.Checkpoint() == h.w.LastSeq()+1 })
	got, _ := h.fc.snapshot()
	if fmt.Sprint(got["a/0"]) != "[a0 a1 a2]" || fmt.Sprint(got["b/1"]) != "[b0]" {
		t.Fatalf("committed %v", got)
	}
}

// A failing destination is retried alone; healthy ones commit once, and
// the checkpoint does not pass the failing records until they commit.
func TestFailingBucketDoesNotBlockOrDuplicateOthers(t *testing.T) {
	h := start(t)
	h.fc.setFailing("a/0", errors.New("owner down: node unreachable"))
	h.append(t, "a", 0, "stuck")
	h.append(t, "a", 1, "fine")
	h.append(t, "b", 0, "also fine")
	waitFor(t, "several retries of the failing bucket", func() bool {
		_, calls := h.fc.snapshot()
		return calls["a/0"] >= 3
	})
	got, calls := h.fc.snapshot()
	if calls["a/1"] != 1 || calls["b/0"] != 1 || len(got["a/1"]) != 1 {
		t.Fatalf("healthy buckets committed %d and %d times: %v", calls["a/1"], calls["b/0"], got)
	}
	if h.w.Checkpoint() > 1 {
		t.Fatalf("checkpoint %d passed an uncommitted record", h.w.Checkpoint())
	}
	h.fc.setFailing("a/0", nil)
	waitFor(t, "recovery", func() bool { return h.w.Checkpoint() == h.w.LastSeq()+1 })
	got, _ = h.fc.snapshot()
	if fmt.Sprint(got["a/0"]) != "[stuck]" {
		t.Fatalf("after recovery: %v", got["a/0"])
	}
}

// Records of a topic that is not found are kept until the Discarder
// (leader-confirmed absence) agrees they can go.
func TestDiscardOnlyWhenConfirmed(t *testing.T) {
	h := start(t)
	h.fc.setFailing("gone/0", refusal.New(refusal.ErrTopicNotFound, 0, "topic %q does not exist", "gone"))
	h.append(t, "gone", 0, "orphan")
	waitFor(t, "retries", func() bool { _, c := h.fc.snapshot(); return c["gone/0"] >= 3 })
	if h.w.Checkpoint() > 1 {
		t.Fatalf("discarded without confirmation: checkpoint %d", h.w.Checkpoint())
	}
	h.mu.Lock()
	h.gone["gone"] = true
	h.mu.Unlock()
	waitFor(t, "discard after confirmation", func() bool { return h.w.Checkpoint() == h.w.LastSeq()+1 })
}

// Records carry their topic incarnation to the commit. Those of a deleted
// incarnation (the owner refuses them, 404) wait until the Discarder
// confirms that incarnation is gone, and never reach the re-created topic;
// the current incarnation's records and version-1 records (incarnation 0)
// commit meanwhile, each destination apart.
func TestRecordsOfADeletedIncarnationAreDiscardedNotCommitted(t *testing.T) {
	h := start(t)
	h.fc.setFailing("t@10/0", refusal.New(refusal.ErrIncarnationGone, 0, "topic %q: records of incarnation 10, which was deleted", "t"))
	h.appendInc(t, "t", 10, 0, "old-1")
	h.appendInc(t, "t", 20, 0, "new-1")
	h.appendInc(t, "t", 10, 0, "old-2")
	h.appendInc(t, "t", 0, 0, "legacy")
	waitFor(t, "the current incarnation to commit", func() bool {
		got, _ := h.fc.snapshot()
		return len(got["t@20/0"]) == 1 && len(got["t/0"]) == 1
	})
	waitFor(t, "retries of the deleted incarnation", func() bool { _, c := h.fc.snapshot(); return c["t@10/0"] >= 3 })
	if h.w.Checkpoint() > 1 {
		t.Fatalf("records of a deleted incarnation dropped without confirmation: checkpoint %d", h.w.Checkpoint())
	}
	h.mu.Lock()
	h.gone["t"] = true // the name alone says nothing about incarnation 10
	h.mu.Unlock()
	waitFor(t, "more retries", func() bool { _, c := h.fc.snapshot(); return c["t@10/0"] >= 5 })
	if h.w.Checkpoint() > 1 {
		t.Fatalf("incarnation 10 discarded on the name's word: checkpoint %d", h.w.Checkpoint())
	}
	h.mu.Lock()
	h.gone["t@10"] = true
	h.mu.Unlock()
	waitFor(t, "discard after confirmation", func() bool { return h.w.Checkpoint() == h.w.LastSeq()+1 })
	got, _ := h.fc.snapshot()
	if fmt.Sprint(got["t@20/0"]) != "[new-1]" || fmt.Sprint(got["t/0"]) != "[legacy]" || len(got["t@10/0"]) != 0 {
		t.Fatalf("committed %v", got)
	}
}

// A partition that no longer exists (topic recreated smaller) goes to a
// sibling instead of blocking forever.
func TestVanishedPartitionReroutes(t *testing.T) {
	h := start(t)
	h.fc.setFailing("r/6", refusal.New(refusal.ErrPartitionRange, 0, "partition 6 is out of range"))
	h.append(t, "r", 6, "x")
	waitFor(t, "reroute", func() bool { return h.w.Checkpoint() == h.w.LastSeq()+1 })
	got, _ := h.fc.snapshot()
	if fmt.Sprint(got["r/2"]) != "[x]" {
		t.Fatalf("rerouted to %v", got)
	}
}

// Records for a destination that keeps failing go to the sibling the
// Reroute hook names once it says so (after 3 passes, in the server).
func TestRerouteAfterFailedPasses(t *testing.T) {
	w, err := wal.Open(t.TempDir(), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fc := newFake()
	fc.setFailing("t/0", errors.New("owner dead: node unreachable"))
	var asked []int
	var mu sync.Mutex
	d := &Dispatcher{WAL: w, Commit: fc, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler),
		Backoff: 10 * time.Millisecond, Partitions: func(string) int { return 2 },
		Discard: func(context.Context, string, uint64) bool { return false },
		Reroute: func(topic string, p int32, fails int) (int32, bool) {
			mu.Lock()
			asked = append(asked, fails)
			mu.Unlock()
			return 1, fails >= 3
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done; w.Close() }()
	if err := w.Append(context.Background(), []wal.Record{{Topic: "t", Partition: 0, Payload: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "rerouted", func() bool { return w.Checkpoint() == w.LastSeq()+1 })
	got, calls := fc.snapshot()
	if fmt.Sprint(got["t/1"]) != "[x]" || calls["t/0"] != 3 {
		t.Fatalf("committed %v after %d tries of t/0", got, calls["t/0"])
	}
}

// Discard and reroute act on the owner's typed refusal only. An error that
// merely reads like one — an HTTP 404 or 400 of the API's vocabulary, or any
// text — is retried and its records kept: dropping or moving records is
// never decided on a status. (A remote owner's refusals come back typed:
// package rpc.)
func TestOnlyTypedRefusalsDiscardOrReroute(t *testing.T) {
	h := start(t)
	h.mu.Lock()
	h.gone["gone"] = true // the leader would confirm: only the refusal's kind is missing
	h.mu.Unlock()
	h.fc.setFailing("gone/0", apierr.NotFound("topic %q does not exist", "gone"))
	h.fc.setFailing("r/6", apierr.BadRequest("partition 6 is out of range"))
	h.append(t, "gone", 0, "kept")
	h.append(t, "r", 6, "stays")
	waitFor(t, "retries of both", func() bool {
		_, c := h.fc.snapshot()
		return c["gone/0"] >= 3 && c["r/6"] >= 3
	})
	if got, _ := h.fc.snapshot(); h.w.Checkpoint() > 1 || len(got["r/2"]) != 0 {
		t.Fatalf("untyped errors settled records: checkpoint %d, committed %v", h.w.Checkpoint(), got)
	}
	h.fc.setFailing("gone/0", nil)
	h.fc.setFailing("r/6", nil)
	waitFor(t, "both committed where they were meant to go", func() bool { return h.w.Checkpoint() == h.w.LastSeq()+1 })
	if got, _ := h.fc.snapshot(); fmt.Sprint(got["gone/0"]) != "[kept]" || fmt.Sprint(got["r/6"]) != "[stays]" {
		t.Fatalf("committed %v", got)
	}
}
