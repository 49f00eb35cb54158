package replica

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/storage"
)

// leaderRig is a Leader "a" of a 3-replica partition on a fake clock,
// proposing to a memMeta.
type leaderRig struct {
	t   testing.TB
	clk *clock.Fake
	log *memLog
	md  *memMeta
	l   *Leader
}

func newLeaderRig(t testing.TB, records int) *leaderRig {
	t.Helper()
	r := &leaderRig{t: t, clk: clock.NewFake(time.Time{}), log: newMemLog()}
	r.md = newMemMeta(modelNodes, func(string) bool { return true })
	// The records are the partition's history from before it was
	// replicated (LastEpoch 0): the rig's Leader begins epoch 1 afresh.
	for i := range records {
		if _, err := r.log.commit([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	r.l = r.begun(r.md)
	return r
}

// begun is a Leader "a" of the view's epoch over the rig's log that has
// begun and seen the view its begin left.
func (r *leaderRig) begun(p Proposer) *Leader {
	r.t.Helper()
	l, err := NewLeader(LeaderConfig{Self: "a", View: r.md.view(), Log: r.log, Proposer: p, Clock: r.clk})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := l.begin(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	l.Update(r.md.view())
	return l
}

// restart is the leader's process dying and starting again: the new
// Leader of the same epoch renews it, and the next epoch's Leader takes
// over, ready at the log's end.
func (r *leaderRig) restart() {
	r.t.Helper()
	_ = r.l.Close()
	p := r.l.cfg.Proposer
	if err := r.begun(p).Writable(); !errors.Is(err, ErrDeposed) {
		r.t.Fatalf("the restarted Leader of the old epoch: Writable = %v, want ErrDeposed (renewed)", err)
	}
	r.l = r.begun(p)
	if err := r.l.Writable(); err != nil {
		r.t.Fatalf("the renewed epoch's Leader: %v", err)
	}
}

func (r *leaderRig) fetch(node string, off uint64) (FetchResponse, error) {
	v := r.md.view()
	return r.l.HandleFetch(context.Background(), FetchRequest{Topic: v.Topic, Incarnation: v.Incarnation, Partition: v.Partition,
		Epoch: v.Epoch, Follower: node, DiskID: diskOf(node, 0), Offset: off})
}

// A new leader writes its epoch to replica.state and proposes its start
// at its end; until the view carries that start it refuses commits and
// fetches as not ready.
func TestLeaderIsReadyOnlyOnceItsEpochStartIsInTheView(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	md := newMemMeta(modelNodes, func(string) bool { return true })
	log := newMemLog()
	log.state.LastEpoch = 1 // b followed epoch 1's leader
	for range 3 {
		_, _ = log.commit([]byte("x"))
	}
	if err := md.electLeader("b"); err != nil {
		t.Fatal(err)
	}
	l, err := NewLeader(LeaderConfig{Self: "b", View: md.view(), Log: log, Proposer: md, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := log.ReplicaState(); st.LastEpoch != 2 {
		t.Fatalf("replica.state after begin = %+v, want LastEpoch 2", st)
	}
	if s, ok := startOf(md.view().EpochStarts, 2); !ok || s.Offset != 3 {
		t.Fatalf("epoch starts %v: want {2 3}", md.view().EpochStarts)
	}
	if err := l.Writable(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Writable before the view = %v, want ErrNotReady", err)
	}
	if err := l.WaitCommitted(context.Background(), 0); !errors.Is(err, ErrNotReady) {
		t.Fatalf("WaitCommitted before the view = %v, want ErrNotReady", err)
	}
	v := md.view()
	if _, err := l.HandleFetch(context.Background(), FetchRequest{Topic: v.Topic, Incarnation: 1, Epoch: 2, Follower: "c"}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("fetch before the view = %v, want ErrNotReady", err)
	}
	l.Update(md.view())
	if err := l.Writable(); err != nil {
		t.Fatalf("Writable once the start is in the view = %v", err)
	}
	if s := l.Stats(); !s.Ready || s.Epoch != 2 {
		t.Fatalf("stats of a ready leader: %+v", s)
	}

	if _, err := log.commit([]byte("y")); err != nil { // written in epoch 2
		t.Fatal(err)
	}

	// The process restarts within its epoch (its start is recorded and
	// replica.state says it wrote in it): the new Leader never writes in
	// that epoch again, it renews it (the next epoch, same leader and
	// in-sync set); the next epoch's Leader starts at its end. A closed
	// Leader is not ready either.
	_ = l.Close()
	if s := l.Stats(); s.Ready {
		t.Fatalf("stats of a closed leader: %+v", s)
	}
	before := md.view()
	l2, err := NewLeader(LeaderConfig{Self: "b", View: before, Log: log, Proposer: md, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.begin(context.Background()); err != nil {
		t.Fatalf("begin of a restarted leader at its own epoch: %v", err)
	}
	l2.Update(before)
	if err := l2.Writable(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Writable after a restart within the epoch = %v, want ErrNotReady", err)
	}
	after := md.view()
	if after.Epoch != 3 || after.Leader != "b" || !slices.Equal(after.InSync, before.InSync) {
		t.Fatalf("view after the restarted leader's begin: %+v (before %+v), want epoch 3 led by b with the same in-sync set", after, before)
	}
	l2.Update(after)
	if err := l2.Writable(); !errors.Is(err, ErrDeposed) {
		t.Fatalf("Writable of the renewing Leader once the next epoch is in the view = %v, want ErrDeposed", err)
	}
	l3, err := NewLeader(LeaderConfig{Self: "b", View: after, Log: log, Proposer: md, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := l3.begin(context.Background()); err != nil {
		t.Fatalf("begin of the renewed epoch's leader: %v", err)
	}
	if s, ok := startOf(md.view().EpochStarts, 3); !ok || s.Offset != 4 {
		t.Fatalf("epoch starts %v: want {3 4}", md.view().EpochStarts)
	}
	l3.Update(md.view())
	if err := l3.Writable(); err != nil {
		t.Fatalf("Writable of the renewed epoch's leader = %v", err)
	}
}

// A renewal that is lost is proposed again on the tick, at most once a
// second, until the next epoch is in the view.
func TestLeaderProposesItsRenewalAgain(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	md := newMemMeta(modelNodes, func(string) bool { return true })
	log := newMemLog()
	log.state.LastEpoch = 1 // a leads epoch 1 and wrote in it before a restart
	if _, err := log.commit([]byte("x")); err != nil {
		t.Fatal(err)
	}
	lossy := &losingProposer{memMeta: md, lose: 2}
	l, err := NewLeader(LeaderConfig{Self: "a", View: md.view(), Log: log, Proposer: lossy, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(500 * time.Millisecond)
	l.tick(context.Background()) // too soon: not proposed again
	if lossy.renewals != 1 || md.view().Epoch != 1 {
		t.Fatalf("after half a second: %d renewals proposed, epoch %d; want 1 and 1", lossy.renewals, md.view().Epoch)
	}
	for range 2 {
		clk.Advance(time.Second)
		l.tick(context.Background())
	}
	if lossy.renewals != 3 || md.view().Epoch != 2 || md.view().Leader != "a" {
		t.Fatalf("after two more ticks: %d renewals proposed, view %+v; want 3, epoch 2 led by a", lossy.renewals, md.view())
	}
	if err := l.Writable(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Writable of a renewing Leader = %v, want ErrNotReady", err)
	}
}

// losingProposer loses the first lose renewals it is given.
type losingProposer struct {
	*memMeta
	lose, renewals int
}

func (p *losingProposer) RenewEpoch(ctx context.Context, topic string, partition int, epoch uint64, leader string) error {
	p.renewals++
	if p.renewals <= p.lose {
		return errRefused
	}
	return p.memMeta.RenewEpoch(ctx, topic, partition, epoch, leader)
}

// A leader whose start is recorded but whose replica.state never saw the
// epoch (or whose end is below its start) lost its disk: it never leads.
func TestLeaderWithALostDiskRefusesToLead(t *testing.T) {
	md := newMemMeta(modelNodes, func(string) bool { return true })
	_ = md.electLeader("b")
	_ = md.StartEpoch(context.Background(), "t", 0, 2, "b", 5)
	l, err := NewLeader(LeaderConfig{Self: "b", View: md.view(), Log: newMemLog(), Proposer: md, Clock: clock.NewFake(time.Time{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.begin(context.Background()); !errors.Is(err, ErrStateLost) {
		t.Fatalf("begin = %v, want ErrStateLost", err)
	}
	l.Update(md.view())
	if err := l.Writable(); !errors.Is(err, ErrStateLost) {
		t.Fatalf("Writable = %v, want ErrStateLost", err)
	}
}

func TestLeaderFetchRefusals(t *testing.T) {
	r := newLeaderRig(t, 2)
	v := r.md.view()
	base := FetchRequest{Topic: v.Topic, Incarnation: v.Incarnation, Partition: v.Partition, Epoch: v.Epoch, Follower: "b"}
	for _, c := range []struct {
		name   string
		mod    func(*FetchRequest)
		want   error
		behind bool
	}{
		{"follower behind", func(q *FetchRequest) { q.Epoch = 0 }, ErrStaleEpoch, true},
		{"leader deposed", func(q *FetchRequest) { q.Epoch = 2 }, ErrStaleEpoch, false},
		{"not a replica", func(q *FetchRequest) { q.Follower = "z" }, ErrNotReplica, false},
		{"the leader itself", func(q *FetchRequest) { q.Follower = "a" }, ErrNotReplica, false},
		{"another partition", func(q *FetchRequest) { q.Partition = 1 }, ErrWrongPartition, false},
		{"another incarnation", func(q *FetchRequest) { q.Incarnation = 2 }, ErrWrongPartition, false},
	} {
		q := base
		c.mod(&q)
		resp, err := r.l.HandleFetch(context.Background(), q)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		var ee *EpochError
		if errors.As(err, &ee) && ee.RequesterBehind() != c.behind {
			t.Errorf("%s: RequesterBehind = %v", c.name, ee.RequesterBehind())
		}
		if len(resp.Records) != 0 || resp.Epoch != v.Epoch {
			t.Errorf("%s: answer %+v, want no records and epoch %d", c.name, resp, v.Epoch)
		}
	}
	if s := r.l.Stats(); s.Followers[0].Records != 2 || s.Committed != 0 {
		t.Fatalf("a refused fetch changed the leader: %+v", s)
	}
	// Past the end, in the leader's own epoch: the leader lost records.
	q := base
	q.Offset = 3
	if _, err := r.l.HandleFetch(context.Background(), q); !errors.Is(err, ErrOffsetAhead) {
		t.Fatalf("fetch past the end = %v, want ErrOffsetAhead", err)
	}
	if err := r.l.Writable(); !errors.Is(err, ErrStateLost) {
		t.Fatalf("after a fetch past its end the leader is %v, want ErrStateLost", err)
	}
}

// The committed point is the least durable end over the in-sync set, the
// leader's own included; WaitCommitted returns once it passes the record.
func TestLeaderCommitsAtTheLeastInSyncEnd(t *testing.T) {
	r := newLeaderRig(t, 3)
	done := make(chan error, 1)
	go func() { done <- r.l.WaitCommitted(context.Background(), 1) }()
	if resp, err := r.fetch("b", 3); err != nil || resp.Committed != 0 {
		t.Fatalf("b at 3: %+v %v; c has not fetched, nothing is committed", resp, err)
	}
	if resp, err := r.fetch("c", 1); err != nil || resp.Committed != 1 || len(resp.Records) != 2 {
		t.Fatalf("c at 1: committed %d, %d records, %v; want 1 and 2", resp.Committed, len(resp.Records), err)
	}
	if r.log.HWM() != 1 {
		t.Fatalf("released %d, want 1", r.log.HWM())
	}
	select {
	case err := <-done:
		t.Fatalf("WaitCommitted(1) returned %v at committed 1", err)
	default:
	}
	if _, err := r.fetch("c", 3); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("WaitCommitted(1) = %v", err)
	}
	// A leadership that ends fails the waiters that are left.
	_, _ = r.log.commit([]byte("y"))
	go func() { done <- r.l.WaitCommitted(context.Background(), 3) }()
	_ = r.md.electLeader("b")
	r.l.Update(r.md.view())
	if err := <-done; !errors.Is(err, ErrDeposed) {
		t.Fatalf("WaitCommitted after deposition = %v, want ErrDeposed", err)
	}
}

// Below a majority in the view, nothing commits, whatever the acks.
func TestLeaderCommitsNothingBelowAMajority(t *testing.T) {
	r := newLeaderRig(t, 2)
	// Two replaced disks take b and c out of the set, below a majority
	// (a leader never shrinks it that far).
	r.md.replaceDisk("b", diskOf("b", 1))
	r.md.replaceDisk("c", diskOf("c", 1))
	r.l.Update(r.md.view())
	if _, err := r.fetch("b", 2); err != nil {
		t.Fatal(err)
	}
	if c := r.l.Committed(); c != 0 {
		t.Fatalf("committed %d with an in-sync set of 1 of 3", c)
	}
}

// A member lagging more than LagMax leaves the in-sync set, never below
// a majority; one that caught up comes back. While a change is in flight
// the committed point waits for the stricter set.
func TestLeaderInSyncShrinksAndGrows(t *testing.T) {
	r := newLeaderRig(t, 2)
	if _, err := r.fetch("b", 2); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(DefaultLagMax + time.Millisecond)
	if _, err := r.fetch("b", 2); err != nil {
		t.Fatal(err)
	}
	r.l.tick(context.Background())
	if got := r.md.view().InSync; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("in-sync after c lagged = %v, want [a b]", got)
	}
	if c := r.l.Committed(); c != 0 {
		t.Fatalf("committed %d before the view showed the shrink (stricter set)", c)
	}
	r.l.Update(r.md.view())
	if c := r.l.Committed(); c != 2 {
		t.Fatalf("committed %d once c left, want 2", c)
	}
	// b lags too: it stays (2 of 3 is the majority).
	r.clk.Advance(2 * DefaultLagMax)
	r.l.tick(context.Background())
	if got := r.md.view().InSync; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("in-sync = %v, want [a b]: never below a majority", got)
	}
	if s := r.l.Stats(); s.Followers[0].Time < 2*DefaultLagMax {
		t.Fatalf("b's lag in time = %v", s.Followers[0].Time)
	}
	// c catches up: it comes back.
	if _, err := r.fetch("c", 2); err != nil {
		t.Fatal(err)
	}
	r.l.tick(context.Background())
	if got := r.md.view().InSync; !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("in-sync after c caught up = %v, want [a b c]", got)
	}
	if s := r.l.Stats(); s.InSync != 2 || s.Epoch != 1 || s.Followers[1].Records != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// A fetch with nothing past its offset waits on the log's end, bounded
// by the clock.
func TestLeaderLongPoll(t *testing.T) {
	r := newLeaderRig(t, 1)
	v := r.md.view()
	q := FetchRequest{Topic: v.Topic, Incarnation: v.Incarnation, Epoch: 1, Follower: "b", Offset: 1, Wait: time.Minute}
	got := make(chan FetchResponse, 1)
	go func() { resp, _ := r.l.HandleFetch(context.Background(), q); got <- resp }()
	if !r.clk.BlockUntil(1, 5*time.Second) {
		t.Fatal("the fetch did not park")
	}
	_, _ = r.log.commit([]byte("late"))
	if resp := <-got; len(resp.Records) != 1 || string(resp.Records[0].Payload) != "late" {
		t.Fatalf("woken fetch answered %+v", resp)
	}
	q.Offset = 2
	go func() { resp, _ := r.l.HandleFetch(context.Background(), q); got <- resp }()
	if !r.clk.BlockUntil(1, 5*time.Second) {
		t.Fatal("the fetch did not park")
	}
	r.clk.Advance(DefaultMaxWait) // the bound, not the minute asked for
	if resp := <-got; len(resp.Records) != 0 {
		t.Fatalf("timed-out fetch answered %+v", resp)
	}
}

// Start runs the in-sync checks on the clock and Close stops them.
func TestLeaderStartAndClose(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	md := newMemMeta(modelNodes, func(string) bool { return true })
	log := newMemLog()
	l, err := NewLeader(LeaderConfig{Self: "a", View: md.view(), Log: log, Proposer: md, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Update(md.view())
	if _, err := l.HandleFetch(context.Background(), FetchRequest{Topic: "t", Incarnation: 1, Epoch: 1, Follower: "b"}); err != nil {
		t.Fatal(err)
	}
	// The wiring hands the leader every new view (the broker's reconcile):
	// here after each tick, so a proposal is decided on the set and
	// version the metastore holds.
	for range 12 { // c never fetches
		if !clk.BlockUntil(1, 5*time.Second) {
			t.Fatal("the loop is not on the clock")
		}
		clk.Advance(DefaultTick)
		l.Update(md.view())
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(md.view().InSync) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("in-sync = %v, want a and one follower", md.view().InSync)
		}
		l.Update(md.view())
		if clk.BlockUntil(1, time.Millisecond) {
			clk.Advance(DefaultTick)
		}
		time.Sleep(time.Millisecond) // polling a condition, not a timed wait
	}
	_, _ = log.commit([]byte("x"))
	l.Update(md.view())
	for _, n := range md.view().InSync[1:] {
		if _, err := l.HandleFetch(context.Background(), FetchRequest{Topic: "t", Incarnation: 1, Epoch: 1, Follower: n, Offset: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if st := log.ReplicaState(); st != (storage.ReplicaState{LastEpoch: 1, Committed: 1}) {
		t.Fatalf("replica.state after Close = %+v, want the committed point checkpointed", st)
	}
	if err := l.WaitCommitted(context.Background(), 5); !errors.Is(err, ErrDeposed) {
		t.Fatalf("WaitCommitted after Close = %v", err)
	}
}

// Followers may copy what the leader has written before its own fsync
// ends: a fetch past the leader's durable end and within what it wrote is
// an acknowledgement like any other, but the committed point waits for
// the leader's own durable end, which a producer's WaitCommitted takes.
// A fetch past what it wrote means the leader lost records: it stops
// (ErrStateLost).
func TestLeaderCountsFollowersAheadOfItsOwnSync(t *testing.T) {
	r := newLeaderRig(t, 2)
	r.log.lazy = true
	for range 3 {
		if _, err := r.log.commit([]byte("w")); err != nil {
			t.Fatal(err)
		}
	}
	if e, w := r.log.End(), r.log.Written(); e != 2 || w != 5 {
		t.Fatalf("rig: durable end %d, written %d; want 2 and 5", e, w)
	}
	resp, err := r.fetch("b", 2)
	if err != nil || len(resp.Records) != 3 || resp.Records[0].Offset != 2 {
		t.Fatalf("fetch from the durable end: %d records from %v, %v; want the 3 written", len(resp.Records), resp.Records, err)
	}
	for _, n := range []string{"b", "c"} {
		mustFetch(t, r, n, 5)
	}
	if c := r.l.Committed(); c != 2 {
		t.Fatalf("committed %d with both followers at 5 and the leader durable to 2, want 2", c)
	}
	// The leader's own sync ends; no fetch reports it (the followers
	// have everything): the producer's wait takes it.
	r.log.flush()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.l.WaitCommitted(ctx, 4); err != nil {
		t.Fatalf("WaitCommitted(4) once the leader's own records are durable: %v (committed %d)", err, r.l.Committed())
	}
	if _, err := r.fetch("c", 6); !errors.Is(err, ErrOffsetAhead) {
		t.Fatalf("fetch past what the leader wrote = %v, want ErrOffsetAhead", err)
	}
	if err := r.l.Writable(); !errors.Is(err, ErrStateLost) {
		t.Fatalf("Writable after a fetch past what it wrote = %v, want ErrStateLost", err)
	}
}
