package broker

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/messageid"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/storage"
)

// fakeEngine records the roles the broker starts; its leader commits what
// the test says a quorum holds (commitTo), and is ready when told.
type fakeEngine struct {
	// takeOver, when set, holds every leader's Start until it is
	// closed; the leader is ready once Start returns (a new topic's epoch
	// 1, whose start the placement recorded).
	takeOver chan struct{}

	mu        sync.Mutex
	leaders   []*fakeLeader
	followers []*fakeFollower
}

func (e *fakeEngine) NewLeader(l replica.Log, v replica.View, frontier func() uint64, state func() replica.SideState) (hosted.ReplicaLeader, error) {
	fl := &fakeLeader{log: l, view: v, frontier: frontier, state: state, moved: make(chan struct{}), takeOver: e.takeOver}
	e.mu.Lock()
	e.leaders = append(e.leaders, fl)
	e.mu.Unlock()
	return fl, nil
}

func (e *fakeEngine) NewFollower(l replica.Log, v replica.View, onFrontier func(uint64), onState func(replica.SideState) error) (hosted.ReplicaFollower, error) {
	ff := &fakeFollower{log: l, view: v, onFrontier: onFrontier, onState: onState}
	e.mu.Lock()
	e.followers = append(e.followers, ff)
	e.mu.Unlock()
	return ff, nil
}

func (e *fakeEngine) leader(i int) *fakeLeader {
	e.mu.Lock()
	defer e.mu.Unlock()
	if i < len(e.leaders) {
		return e.leaders[i]
	}
	return nil
}

func (e *fakeEngine) follower(i int) *fakeFollower {
	e.mu.Lock()
	defer e.mu.Unlock()
	if i < len(e.followers) {
		return e.followers[i]
	}
	return nil
}

type fakeLeader struct {
	log      replica.Log
	view     replica.View
	frontier func() uint64
	state    func() replica.SideState
	ready    atomic.Bool
	closed   atomic.Bool
	deposed  atomic.Bool   // Writable says ErrDeposed, as a Leader that ended
	takeOver chan struct{} // fakeEngine.takeOver

	mu        sync.Mutex
	committed uint64
	moved     chan struct{}
}

func (f *fakeLeader) Start(ctx context.Context) error {
	if f.takeOver == nil {
		return nil
	}
	select {
	case <-f.takeOver:
		f.ready.Store(true)
	case <-ctx.Done():
	}
	return nil
}
func (f *fakeLeader) Update(v replica.View)      {}
func (f *fakeLeader) Close() error               { f.closed.Store(true); return nil }
func (f *fakeLeader) Stats() replica.LeaderStats { return replica.LeaderStats{InSync: 3} }

func (f *fakeLeader) Writable() error {
	if f.deposed.Load() {
		return replica.ErrDeposed
	}
	if !f.ready.Load() {
		return replica.ErrNotReady
	}
	return nil
}
func (f *fakeLeader) HandleFetch(ctx context.Context, req replica.FetchRequest) (replica.FetchResponse, error) {
	return replica.FetchResponse{Epoch: f.view.Epoch, Frontier: f.frontier()}, nil
}

// commitTo is the quorum holding everything below n.
func (f *fakeLeader) commitTo(n uint64) {
	f.log.Release(n)
	f.mu.Lock()
	f.committed = n
	close(f.moved)
	f.moved = make(chan struct{})
	f.mu.Unlock()
}

func (f *fakeLeader) WaitCommitted(ctx context.Context, offset uint64) error {
	for {
		f.mu.Lock()
		c, ch := f.committed, f.moved
		f.mu.Unlock()
		if c > offset {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type fakeFollower struct {
	log        replica.Log
	view       replica.View
	onFrontier func(uint64)
	onState    func(replica.SideState) error
	running    atomic.Bool
	ended      atomic.Bool
}

func (f *fakeFollower) Run(ctx context.Context) error {
	f.running.Store(true)
	<-ctx.Done()
	f.ended.Store(true)
	return nil
}
func (f *fakeFollower) Update(v replica.View)                    {}
func (f *fakeFollower) Close() error                             { return nil }
func (f *fakeFollower) Unreachable() (replica.Unreachable, bool) { return replica.Unreachable{}, false }

// waitFor polls cond (the hosting loop reacts to metastore changes on its
// own goroutine); it fails the test after a generous bound.
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

// createReplicated creates a one-partition topic with three replicas led
// by leader at epoch 1.
func createReplicated(t *testing.T, n *testNode, name, leader string) {
	t.Helper()
	reps := []string{"n1", "n2", "n3"}
	tp := meta.Topic{Name: name, Partitions: 1, ReplicationFactor: 3, RetentionMs: 3600_000, VisibilityTimeoutMs: 30_000,
		MaxInFlight: 100, MaxAckedAhead: 100}
	as := []meta.Assignment{{Topic: name, Partition: 0, Owner: leader, Replicas: reps, InSync: reps, LeaderEpoch: 1,
		EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}}}}
	if err := n.ms.CreateTopic(testCtx(t), tp, as, nil); err != nil {
		t.Fatal(err)
	}
}

func setPlacement(t *testing.T, n *testNode, a meta.Assignment) {
	t.Helper()
	if err := n.ms.SetAssignments(testCtx(t), []meta.Assignment{a}); err != nil {
		t.Fatal(err)
	}
}

// A replicated partition led here opens held and serves only once its
// leader is ready and the node is not fenced; a commit returns only once
// the quorum holds it, and answers 503 (not ready) when it does not in
// time; readers see only what the quorum holds.
func TestReplicatedLeaderServesOnlyWhenReadyAndCommitsWaitForQuorum(t *testing.T) {
	eng := &fakeEngine{}
	var fenced atomic.Bool
	n := newTestNode(t, Config{Replication: eng, Fenced: fenced.Load, ReplicaCommitWait: 200 * time.Millisecond,
		TakeoverWait: 100 * time.Millisecond})
	createReplicated(t, n, "r", "n1")
	waitFor(t, "the leader role", func() bool { return eng.leader(0) != nil })
	fl := eng.leader(0)
	if !n.b.parts.IsHeld("r", 0) {
		t.Fatal("a replicated partition's log is not held")
	}

	err := n.commit("r", 0, "a")
	if !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("commit before the leader is ready: %v", err)
	}
	if _, err := n.consume("r", 0, 1); !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("consume before the leader is ready: %v", err)
	}

	fl.ready.Store(true)
	done := make(chan error, 1)
	go func() { done <- n.commit("r", 0, "a", "b") }()
	waitFor(t, "the commit to be durable here", func() bool { return fl.log.End() == 2 })
	select {
	case err := <-done:
		t.Fatalf("the commit returned before the quorum held it: %v", err)
	default:
	}
	if msgs, _ := n.consume("r", 0, 10); len(msgs) != 0 {
		t.Fatalf("a reader saw %d records no quorum holds", len(msgs))
	}
	fl.commitTo(2)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if msgs, err := n.consume("r", 0, 10); err != nil || len(msgs) != 2 {
		t.Fatalf("after the quorum: %d records, %v", len(msgs), err)
	}

	// No quorum in time: 503, the records durable here but not visible,
	// and the refusal not not_ready, which says nothing was written (a
	// forwarding node would send them again).
	if err := n.commit("r", 0, "c"); !errors.Is(err, refusal.ErrUnavailable) || errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("commit without a quorum: %v", err)
	}
	if fl.log.HWM() != 2 {
		t.Fatalf("visible high watermark %d after an unacknowledged commit", fl.log.HWM())
	}

	fenced.Store(true)
	if _, err := n.consume("r", 0, 1); !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("consume while fenced: %v", err)
	}
	if err := n.commit("r", 0, "d"); !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("commit while fenced: %v", err)
	}
	if _, err := n.b.Fetch(testCtx(t), replica.FetchRequest{Topic: "r", Partition: 0, Epoch: 1}); !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("fetch while fenced: %v", err)
	}
}

// A commit that reaches the leader's node before the node has taken the
// leadership over — its role not started or not ready yet, as right after
// the topic's create — waits for it (Config.TakeoverWait) and is
// committed, instead of answering 503; one that waits past the bound is
// refused, and a fenced node refuses at once: waiting changes who may
// serve in no case.
func TestCommitWaitsForTheLeadershipTakenOver(t *testing.T) {
	eng := &fakeEngine{takeOver: make(chan struct{})}
	var fenced atomic.Bool
	n := newTestNode(t, Config{Replication: eng, Fenced: fenced.Load, TakeoverWait: time.Minute})
	createReplicated(t, n, "r", "n1")
	done := make(chan error, 1)
	go func() { done <- n.commit("r", 0, "a") }()
	waitFor(t, "the leader role", func() bool { return eng.leader(0) != nil })
	fl := eng.leader(0)
	select {
	case err := <-done:
		t.Fatalf("a commit answered before the leadership was taken over: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if fl.log.End() != 0 {
		t.Fatal("a record was written before the leader was ready")
	}
	close(eng.takeOver) // Start returns, the role is ready
	waitFor(t, "the held commit to be written", func() bool { return fl.log.End() == 1 })
	fl.commitTo(1)
	if err := <-done; err != nil {
		t.Fatalf("the commit held for the takeover: %v", err)
	}

	// Fenced: refused at once, not held for the minute.
	fenced.Store(true)
	began := time.Now()
	if err := n.commit("r", 0, "b"); !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("commit while fenced: %v", err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("a fenced node held the commit %s", took)
	}
}

// A leadership never taken over: the commit waits TakeoverWait, then
// answers the 503 it would have.
func TestCommitTakeoverWaitIsBounded(t *testing.T) {
	eng := &fakeEngine{takeOver: make(chan struct{})}
	const bound = 300 * time.Millisecond
	n := newTestNode(t, Config{Replication: eng, TakeoverWait: bound})
	createReplicated(t, n, "r", "n1")
	waitFor(t, "the leader role", func() bool { return eng.leader(0) != nil })
	began := time.Now()
	err := n.commit("r", 0, "a")
	if !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("commit to a leader never ready: %v", err)
	}
	if took := time.Since(began); took < bound {
		t.Fatalf("refused after %s, before the %s bound", took, bound)
	}
	if eng.leader(0).log.End() != 0 {
		t.Fatal("a record was written under a leader that never took over")
	}
}

// A restarted leader renews its epoch: its Leader of the old epoch ends
// (Writable: ErrDeposed) when the metastore names this node the leader
// of the next one, and the reconcile replaces it by the next epoch's. A
// commit that meets the ended Leader in between waits for the new one
// and is committed under it, instead of answering 503 not_leader,
// which said the records may be stored though none were written.
func TestCommitWaitsForTheRenewedLeadership(t *testing.T) {
	eng := &fakeEngine{takeOver: make(chan struct{})}
	n := newTestNode(t, Config{Replication: eng, TakeoverWait: time.Minute})
	createReplicated(t, n, "r", "n1")
	waitFor(t, "the leader role", func() bool { return eng.leader(0) != nil })
	old := eng.leader(0)
	old.deposed.Store(true) // ended by the renewal, the reconcile not run yet
	done := make(chan error, 1)
	go func() { done <- n.commit("r", 0, "a") }()
	select {
	case err := <-done:
		t.Fatalf("a commit to an ended Leader this node leads again answered at once: %v", err)
	case <-time.After(100 * time.Millisecond):
	}

	reps := []string{"n1", "n2", "n3"}
	setPlacement(t, n, meta.Assignment{Topic: "r", Partition: 0, Owner: "n1", Replicas: reps, InSync: reps,
		LeaderEpoch: 2, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}, {Epoch: 2, Offset: 0}}})
	waitFor(t, "the next epoch's leader role", func() bool { return eng.leader(1) != nil })
	renewed := eng.leader(1)
	close(eng.takeOver) // the new Leader is ready
	waitFor(t, "the held commit to be written", func() bool { return renewed.log.End() == 1 })
	renewed.commitTo(1) // only the new Leader's quorum answers it
	if err := <-done; err != nil {
		t.Fatalf("the commit held across the renewal: %v", err)
	}
	if !old.closed.Load() {
		t.Fatal("the old epoch's Leader was not closed")
	}
}

// A produce to a replicated topic is committed on the leader and answers
// only once the quorum holds it — never through the ingress WAL (this
// broker has none: a WAL append would panic).
func TestReplicatedProduceCommitsOnTheLeader(t *testing.T) {
	eng := &fakeEngine{}
	n := newTestNode(t, Config{Replication: eng})
	createReplicated(t, n, "r", "n1")
	waitFor(t, "the leader role", func() bool { return eng.leader(0) != nil })
	fl := eng.leader(0)
	fl.ready.Store(true)
	done := make(chan error, 1)
	var acc []Accepted
	go func() {
		var err error
		acc, err = n.b.ProduceBatchWithIDs(testCtx(t), "r", []ProduceRecord{{Payload: []byte("x")}, {Payload: []byte("y"), Key: []byte("k")}})
		done <- err
	}()
	waitFor(t, "the records on the leader's disk", func() bool { return fl.log.End() == 2 })
	fl.commitTo(2)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Its records are named by position (they came from no WAL, and the
	// copies agree on offsets): the ids produce answered are the ones a
	// replay shows.
	msgs, err := n.replay("r", 0, 0, 10)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("replay: %d records, %v", len(msgs), err)
	}
	rt, _ := n.b.topic("r")
	for i, m := range msgs {
		if want := messageid.FromPosition(rt.Incarnation, 0, uint64(i)); acc[i].ID != want || m.ID != want || acc[i].Partition != 0 {
			t.Fatalf("record %d: answered %+v, replay shows %q, want %q", i, acc[i], m.ID, want)
		}
	}
}

// A leader change here stops the leader role (its lease table goes) and
// starts a follower of the new leader; the follower copies the leader's
// frontier into its frontier file, never above what it holds; a replica
// removed from the placement stops.
func TestReplicaRolesFollowThePlacement(t *testing.T) {
	eng := &fakeEngine{}
	n := newTestNode(t, Config{Replication: eng})
	createReplicated(t, n, "r", "n1")
	waitFor(t, "the leader role", func() bool { return eng.leader(0) != nil })
	fl := eng.leader(0)
	fl.ready.Store(true)
	go n.commit("r", 0, "a", "b", "c")
	waitFor(t, "three records", func() bool { return fl.log.End() == 3 })
	fl.commitTo(3)
	if _, err := n.consume("r", 0, 1); err != nil {
		t.Fatal(err)
	}
	if n.b.parts.PeekQueue("r", 0) == nil {
		t.Fatal("no queue after a consume")
	}

	reps := []string{"n1", "n2", "n3"}
	setPlacement(t, n, meta.Assignment{Topic: "r", Partition: 0, Owner: "n2", Replicas: reps, InSync: []string{"n2", "n3"},
		LeaderEpoch: 2, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}, {Epoch: 2, Offset: 3}}})
	waitFor(t, "the follower role", func() bool { f := eng.follower(0); return f != nil && f.running.Load() })
	ff := eng.follower(0)
	if !fl.closed.Load() {
		t.Fatal("the old leader role was not closed")
	}
	if ff.view.Leader != "n2" || ff.view.Epoch != 2 {
		t.Fatalf("follower view %+v", ff.view)
	}
	if n.b.parts.PeekQueue("r", 0) != nil {
		t.Fatal("the lease table of the old leadership survived it")
	}
	if err := n.commit("r", 0, "z"); !errors.Is(err, refusal.ErrNotOwner) {
		t.Fatalf("commit on a follower: %v", err)
	}
	if _, err := n.b.Fetch(testCtx(t), replica.FetchRequest{Topic: "r", Partition: 0, Epoch: 2}); !errors.Is(err, refusal.ErrNotLeader) {
		t.Fatalf("fetch from a follower: %v", err)
	}

	ff.onFrontier(99) // above what it holds: clamped
	dir := n.partDir("r", 0)
	got, _, err := storage.ReadOffsetFileFS(n.fs, filepath.Join(dir, storage.ConsumerOffsetFile))
	if err != nil || got != 3 {
		t.Fatalf("copied frontier %d, %v; want 3 (clamped to the records held)", got, err)
	}

	setPlacement(t, n, meta.Assignment{Topic: "r", Partition: 0, Owner: "n2", Replicas: []string{"n2", "n3", "n4"},
		InSync: []string{"n2", "n3"}, LeaderEpoch: 2, EpochStarts: []meta.EpochStart{{Epoch: 2, Offset: 3}}})
	waitFor(t, "the follower to stop", ff.ended.Load)
	waitFor(t, "the role to be forgotten", func() bool { return !n.b.roles.HostsReplica("r", 0) })
}

// A node back on a wiped disk that still leads in its role's view (the
// role learns of the new placement only at the next reconcile) must not
// write: the metastore entry that records its new disk, and so ends its
// fencing, also took it out of the in-sync set. The fake leader never
// learns from views, so it stands for a role whose view lags.
func TestReplicatedLeaderOutOfTheInSyncSetWritesNothing(t *testing.T) {
	eng := &fakeEngine{}
	n := newTestNode(t, Config{Replication: eng, Fenced: func() bool { return false }, ReplicaCommitWait: 200 * time.Millisecond})
	createReplicated(t, n, "r", "n1")
	waitFor(t, "the leader role", func() bool { return eng.leader(0) != nil })
	fl := eng.leader(0)
	fl.ready.Store(true)
	ctx := testCtx(t)
	if err := n.ms.UpsertMember(ctx, meta.Member{ID: "n1", RaftAddr: "n1:1", DiskID: "d1"}); err != nil {
		t.Fatal(err)
	}
	if err := n.ms.ReplaceDisk(ctx, "n1", "d1", "d2"); err != nil {
		t.Fatal(err)
	}
	if err := n.commit("r", 0, "ghost"); !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("commit by a leader out of the in-sync set: %v, want not ready", err)
	}
	if end := fl.log.End(); end != 0 {
		t.Fatalf("%d records written to the log of a leader out of the in-sync set", end)
	}
}

// Consumers waiting on a replicated topic are woken when a quorum holds
// its records (the leader's Release), not when the leader has written
// them: a consumer woken then finds nothing visible, waits again, and may
// miss the wake that mattered. A commit whose producer's quorum wait
// timed out wakes them too, once a quorum holds it.
func TestReplicatedConsumersWakeWhenAQuorumHolds(t *testing.T) {
	n, _, fl := readyLeader(t, Config{ReplicaCommitWait: 100 * time.Millisecond})
	// Becoming ready wakes the topic once (hosted.Roles.noteReady): let
	// that pass first.
	waitFor(t, "the leader noted ready", func() bool {
		return n.metric(`narad_partition_leader_changes_total{partition="0",topic="r"}`) == 1
	})
	woken := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}

	ch := n.b.topicState("r").notify.Wait()
	if err := n.commit("r", 0, "a"); !errors.Is(err, refusal.ErrUnavailable) {
		t.Fatalf("commit without a quorum: %v", err)
	}
	if woken(ch) {
		t.Fatal("consumers were woken for a record no quorum holds")
	}
	fl.commitTo(1)
	if !woken(ch) {
		t.Fatal("consumers were not woken when a quorum came to hold the record")
	}
	if msgs, err := n.consume("r", 0, 10); err != nil || len(msgs) != 1 {
		t.Fatalf("after the quorum: %d records, %v", len(msgs), err)
	}
}

// readyLeader is a node of cfg (its Replication a fake engine) with
// topic "r" replicated and led here by a fake leader that is ready.
func readyLeader(t *testing.T, cfg Config) (*testNode, *fakeEngine, *fakeLeader) {
	eng := &fakeEngine{}
	cfg.Replication = eng
	n := newTestNode(t, cfg)
	createReplicated(t, n, "r", "n1")
	waitFor(t, "the leader role", func() bool { return eng.leader(0) != nil })
	fl := eng.leader(0)
	fl.ready.Store(true)
	return n, eng, fl
}
