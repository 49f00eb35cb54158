package replica

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// directTransport calls a Leader in process; fail makes the next calls
// fail.
type directTransport struct {
	mu   sync.Mutex
	l    *Leader
	fail int
}

var errDown = errors.New("test: leader unreachable")

func (d *directTransport) Fetch(ctx context.Context, leader string, req FetchRequest) (FetchResponse, error) {
	d.mu.Lock()
	l, fail := d.l, d.fail > 0
	if fail {
		d.fail--
	}
	d.mu.Unlock()
	if fail || l == nil {
		return FetchResponse{}, errDown
	}
	return l.HandleFetch(ctx, req)
}

// Run copies the leader's records, marks the epoch before the first,
// releases what the leader committed, hands on the frontier, backs off
// on the clock after errors, and returns when the view makes it leader.
func TestFollowerRun(t *testing.T) {
	r := newLeaderRig(t, 3)
	r.l.cfg.Frontier = func() uint64 { return 99 }
	tr := &directTransport{l: r.l, fail: 2}
	flog := newMemLog()
	var frontier atomic.Uint64
	f, err := NewFollower(FollowerConfig{Self: "b", View: r.md.view(), Log: flog, Transport: tr, Clock: r.clk,
		OnFrontier: func(v uint64) { frontier.Store(v) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	for range 2 { // two failures: two backoffs on the clock
		if !r.clk.BlockUntil(1, 5*time.Second) {
			t.Fatal("no backoff on the clock")
		}
		r.clk.Advance(DefaultMaxBackoff)
	}
	waitFor(t, func() bool { return flog.End() == 3 })
	if st := flog.ReplicaState(); st.LastEpoch != 1 {
		t.Fatalf("replica.state %+v: the epoch is marked before the first record", st)
	}
	// c acknowledges too: the committed point reaches b on its next fetch.
	if _, err := r.fetch("c", 3); err != nil {
		t.Fatal(err)
	}
	_, _ = r.log.commit([]byte("more"))
	waitFor(t, func() bool { return flog.End() == 4 && flog.HWM() == 3 })
	if got := frontier.Load(); got != 4 {
		t.Fatalf("frontier handed on = %d, want the leader's 99 clamped to the end 4", got)
	}
	// A checkpoint once a second.
	r.clk.Advance(DefaultCheckpointEvery)
	_, _ = r.log.commit([]byte("again"))
	waitFor(t, func() bool { return flog.ReplicaState().Committed == 3 })
	// The view makes b the leader: Run returns nil.
	_ = r.md.electLeader("b")
	f.Update(r.md.view())
	r.l.Update(r.md.view()) // a's parked fetch ends with its leadership
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil when this node leads", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// A follower that wrote in an older epoch cuts its divergent tail before
// it fetches in the new one, and waits while the new epoch has no start.
func TestFollowerCutsOnAnEpochChange(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	md := newMemMeta(modelNodes, func(string) bool { return true })
	flog := newMemLog()
	flog.state.LastEpoch = 1
	for range 5 {
		_, _ = flog.commit([]byte("old"))
	}
	_ = flog.Release(2)
	_ = md.electLeader("b")
	f, err := NewFollower(FollowerConfig{Self: "a", View: md.view(), Log: flog, Transport: &directTransport{}, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, wait, err := f.prepare(); wait == nil || err != nil {
		t.Fatalf("prepare without epoch 2's start: wait %v, err %v; want a wait", wait, err)
	}
	_ = md.StartEpoch(context.Background(), "t", 0, 2, "b", 3)
	f.Update(md.view())
	leader, req, wait, err := f.prepare()
	if err != nil || wait != nil || leader != "b" || req.Offset != 3 || req.Epoch != 2 {
		t.Fatalf("prepare = %q %+v %v %v; want a fetch from b at 3, epoch 2", leader, req, wait, err)
	}
	if flog.End() != 3 {
		t.Fatalf("end after the cut = %d, want 3", flog.End())
	}
	// An answer to another epoch, or from another end, is dropped.
	if err := f.apply(FetchRequest{Epoch: 1, Offset: 3}, FetchResponse{Epoch: 1, Committed: 3}, nil); err != nil || flog.HWM() != 2 {
		t.Fatalf("a late answer of epoch 1 was taken: %v, hwm %d", err, flog.HWM())
	}
}

// runFollower runs f until the test ends, then stops it and checks that
// Run ended with its context.
func runFollower(t *testing.T, f *Follower) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel() // a fetch parked on the leader ends with its context
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond) // polling a condition, not a timed wait
	}
}

// A follower marks the epoch (replica.state) before it writes the first
// record of that epoch: a process that dies between the two writes must
// never leave records dated by an older epoch than the one they came in.
// A wiped follower (last epoch 0) holding records of epoch 1 unmarked
// would take them for history from before replication, and no epoch
// change would ever cut them if they were a divergent tail.
func TestFollowerDyingMidFetchLeavesNoUndatedRecord(t *testing.T) {
	r := newLeaderRig(t, 3)
	for writes := range 3 {
		flog := newMemLog()
		f, err := NewFollower(FollowerConfig{Self: "b", DiskID: diskOf("b", 0), View: r.md.view(), Log: flog, Transport: noTransport{}, Clock: r.clk})
		if err != nil {
			t.Fatal(err)
		}
		_, req, _, err := f.prepare()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := r.l.HandleFetch(context.Background(), req)
		if err != nil || len(fetched(resp)) != 3 {
			t.Fatalf("fetch: %d records, %v", len(fetched(resp)), err)
		}
		flog.dieAfter(writes)
		err = f.apply(req, resp, nil)
		flog.crash()
		if end, st := flog.End(), flog.ReplicaState(); end > 0 && st.LastEpoch < 1 {
			t.Fatalf("dying after %d writes: %d records of epoch 1 on disk, replica.state says last epoch %d", writes, end, st.LastEpoch)
		}
		if writes >= 2 && (err != nil || flog.End() != 3) {
			t.Fatalf("with %d writes allowed: apply %v, end %d; want the 3 records", writes, err, flog.End())
		}
	}
}
