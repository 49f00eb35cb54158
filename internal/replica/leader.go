package replica

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
)

// Defaults of the leader's and follower's settings (design: LagMax 2 s,
// fetch Wait 500 ms).
const (
	DefaultLagMax          = 2 * time.Second
	DefaultMaxWait         = 500 * time.Millisecond
	DefaultTick            = 250 * time.Millisecond
	DefaultMaxRecords      = 1000
	DefaultMaxBytes        = 1 << 20
	DefaultCheckpointEvery = time.Second
)

// LeaderConfig is what a Leader needs. Zero durations and sizes take the
// defaults above; Clock nil is the system clock.
type LeaderConfig struct {
	Self     string
	View     View
	Log      Log
	Proposer Proposer
	Clock    clock.Clock
	// LagMax: a follower whose fetches have not reached the leader's end
	// as it was LagMax ago leaves the in-sync set (never below majority).
	LagMax time.Duration
	// MaxWait bounds a fetch's long-poll, whatever the follower asks.
	MaxWait time.Duration
	// Tick is how often the in-sync set is checked (and a missing epoch
	// start or renewal proposed again, at most once a second).
	Tick time.Duration
	// MaxRecords caps one fetch answer; MaxBytes too when the request
	// names none.
	MaxRecords int
	MaxBytes   int
	// CheckpointEvery: how often the committed point is written to
	// replica.state (and on Close).
	CheckpointEvery time.Duration
	// Frontier, if set, is the consumer frontier as last persisted, sent
	// to followers with every fetch answer.
	Frontier func() uint64
	// State, if set, is the partition's SideState as last snapshotted
	// here (cheap: called on every fetch answer); it is sent to a
	// follower whose fetch echoes another version.
	State func() SideState
}

func (c *LeaderConfig) defaults() {
	if c.LagMax <= 0 {
		c.LagMax = DefaultLagMax
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.MaxRecords <= 0 {
		c.MaxRecords = DefaultMaxRecords
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.CheckpointEvery <= 0 {
		c.CheckpointEvery = DefaultCheckpointEvery
	}
	c.Clock = clock.Or(c.Clock)
}

// Leader is the leading replica of one partition at one epoch: it answers
// followers' fetches, computes the committed point from their
// acknowledgements, releases it to readers, and keeps the in-sync set.
// One Leader serves one epoch; a new epoch is a new Leader. Safe for
// concurrent use.
type Leader struct {
	cfg LeaderConfig
	clk clock.Clock
	log Log

	mu         sync.Mutex
	view       View
	ready      bool
	stateErr   error // ErrStateLost: never ready
	ended      error // non-nil once the leadership is over
	endCh      chan struct{}
	committed  uint64
	commitCh   chan struct{} // closed and replaced when committed moves
	releaseErr error
	peers      map[string]*peer
	// pending is the in-sync set proposed and not yet seen in the view
	// (nil: none). Until it is seen, the committed point is computed over
	// the union of it and the view's set (the stricter one).
	pending []string
	// uncertain are sets of failed proposals that may still apply; they
	// join the computation until a later proposal succeeds.
	uncertain [][]string
	// renewing: this node began the view's epoch before (begin), so this
	// Leader never becomes ready; it proposes the next epoch instead.
	renewing bool
	// proposedAt is when the epoch start (or renewal) was last proposed.
	proposedAt     time.Time
	checkpointed   uint64
	checkpointedAt time.Time
	// lastChecked is the committed point at the last invariant check
	// (race builds, invariants.go).
	lastChecked uint64
	// The current stall (stall.go): records have waited past the
	// committed point since waitingSince; stall says why once that is
	// longer than LagMax ("" otherwise); stalls counts those begun.
	waitingSince time.Time
	stall        string
	stalls       uint64

	cancel context.CancelFunc
	done   chan struct{}
}

// peer is what the leader knows of one follower in this epoch.
type peer struct {
	known bool   // it fetched in this epoch
	acked uint64 // its last fetch offset: its durable end
	disk  string // the disk id of its fetches (acked is that disk's)
	// caughtUpAt is the last time its fetches had reached the leader's end
	// (Kafka's lastCaughtUpTime): a fetch at or past End() sets it to now,
	// one at or past the end as it was at its previous fetch sets it to
	// that fetch's time.
	caughtUpAt     time.Time
	lastFetchAt    time.Time
	endAtLastFetch uint64
}

// NewLeader checks cfg and builds a Leader, not ready until Start's epoch
// start is in the view.
func NewLeader(cfg LeaderConfig) (*Leader, error) {
	cfg.defaults()
	v := cfg.View
	switch {
	case cfg.Log == nil || cfg.Proposer == nil:
		return nil, fmt.Errorf("replica: leader of %s/%d needs a log and a proposer", v.Topic, v.Partition)
	case v.Leader != cfg.Self || cfg.Self == "":
		return nil, fmt.Errorf("replica: %s/%d is led by %q at epoch %d, not by %q", v.Topic, v.Partition, v.Leader, v.Epoch, cfg.Self)
	case !slices.Contains(v.Replicas, cfg.Self) || v.Epoch == 0:
		return nil, fmt.Errorf("replica: %s/%d: %q is not a replica at epoch %d", v.Topic, v.Partition, cfg.Self, v.Epoch)
	}
	l := &Leader{cfg: cfg, clk: cfg.Clock, log: cfg.Log, view: cloneView(v), endCh: make(chan struct{}),
		commitCh: make(chan struct{}), peers: map[string]*peer{}}
	l.committed = l.log.HWM()
	l.checkpointed = l.log.ReplicaState().Committed
	l.syncPeersLocked(l.clk.Now())
	l.checkInSyncLocked()
	return l, nil
}

// Start makes this replica the leader of its epoch: it cuts its log as a
// follower would (TruncationPoint), writes LastEpoch to replica.state,
// proposes StartEpoch(epoch, End()) and runs the
// in-sync checks on the clock until Close or ctx ends. The Leader becomes
// ready when an Update carries its epoch start. A Leader of an epoch
// this node began before (replica.state's LastEpoch is the epoch and its
// start is recorded: the process restarted) never becomes ready: it
// proposes RenewEpoch, and the next epoch's Leader takes over. It returns
// ErrStateLost if the replica lost what it wrote in this epoch (the
// Leader then never becomes ready).
func (l *Leader) Start(ctx context.Context) error {
	if err := l.begin(ctx); err != nil {
		return err
	}
	ctx, l.cancel = context.WithCancel(ctx)
	l.done = make(chan struct{})
	go l.loop(ctx)
	return nil
}

// begin is Start without the loop.
func (l *Leader) begin(ctx context.Context) error {
	l.mu.Lock()
	v := l.view
	if l.stateErr != nil {
		l.mu.Unlock()
		return fmt.Errorf("replica: %s/%d epoch %d: %w", v.Topic, v.Partition, v.Epoch, l.stateErr)
	}
	st := l.log.ReplicaState()
	start, recorded := startOf(v.EpochStarts, v.Epoch)
	switch {
	case st.LastEpoch > v.Epoch:
		l.mu.Unlock()
		return &EpochError{Have: st.LastEpoch, Asked: v.Epoch}
	case recorded && st.LastEpoch < v.Epoch && v.Epoch > 1, recorded && start.Offset > l.log.End():
		// Only this replica records its start, after writing LastEpoch;
		// placement records epoch 1's, which is why epoch 1 cannot be
		// told apart here.
		l.stateErr = ErrStateLost
		l.mu.Unlock()
		return fmt.Errorf("replica: %s/%d epoch %d: %w", v.Topic, v.Partition, v.Epoch, ErrStateLost)
	}
	if recorded && st.LastEpoch == v.Epoch {
		// This node began the epoch before, in an earlier process (or an
		// earlier Leader of this one): it may have written in it, and a
		// follower may hold records of it this log no longer has. It
		// never writes in the epoch again; it asks for the next one
		// (meta.RenewEpochCmd), whose start it records at its end.
		l.renewing = true
		l.mu.Unlock()
		l.proposeNext(ctx)
		return nil
	}
	if st.LastEpoch < v.Epoch {
		// A new leader cuts its own log first, as a follower would: a
		// replica that missed an epoch (its view went from e-2 to e while
		// it followed e-2's deposed leader) may hold records of e-2 past
		// e-1's start, never acknowledged; they are not history.
		if err := cutForEpoch(l.log, st, v); err != nil {
			l.mu.Unlock()
			return err
		}
		st.LastEpoch = v.Epoch
		if err := l.log.SaveReplicaState(st); err != nil {
			l.mu.Unlock()
			return fmt.Errorf("replica: %s/%d: writing the leader epoch: %w", v.Topic, v.Partition, err)
		}
	}
	l.checkReadyLocked()
	l.mu.Unlock()
	if !recorded {
		l.proposeNext(ctx)
	}
	return nil
}

// proposeNext proposes what this not yet ready Leader waits for: its
// epoch's start at its log end, or, when it renews, the next epoch.
func (l *Leader) proposeNext(ctx context.Context) {
	l.mu.Lock()
	v, end, renewing := l.view, l.log.End(), l.renewing
	l.proposedAt = l.clk.Now()
	l.mu.Unlock()
	// A refusal (a start is recorded already, or the epoch moved on) is
	// settled by the view: ready, or deposed.
	if renewing {
		_ = l.cfg.Proposer.RenewEpoch(ctx, v.Topic, v.Partition, v.Epoch, l.cfg.Self)
		return
	}
	_ = l.cfg.Proposer.StartEpoch(ctx, v.Topic, v.Partition, v.Epoch, l.cfg.Self, end)
}

func (l *Leader) loop(ctx context.Context) {
	defer close(l.done)
	t := l.clk.NewTicker(l.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.endCh:
			return
		case <-t.C():
			l.tick(ctx)
		}
	}
}

// Update gives the Leader its metastore replica's latest view of the
// partition. Another leader or a later epoch ends the leadership.
func (l *Leader) Update(v View) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended != nil || v.Epoch < l.view.Epoch {
		return // a late delivery of an older view
	}
	if v.Epoch != l.view.Epoch || v.Leader != l.cfg.Self || v.Incarnation != l.view.Incarnation {
		l.endLocked(ErrDeposed)
		return
	}
	l.view = cloneView(v)
	if l.pending != nil && sameSet(l.pending, v.InSync) {
		l.pending = nil
	}
	l.checkInSyncLocked()
	l.syncPeersLocked(l.clk.Now())
	l.checkReadyLocked()
	l.advanceLocked()
	l.checkLocked()
}

// Close ends the leadership (commits waiting get ErrDeposed), stops the
// loop and checkpoints the committed point.
func (l *Leader) Close() error {
	l.mu.Lock()
	l.endLocked(ErrDeposed)
	l.mu.Unlock()
	if l.cancel != nil {
		l.cancel()
		<-l.done
	}
	return l.checkpoint(true)
}

func (l *Leader) endLocked(err error) {
	if l.ended == nil {
		l.ended = err
		close(l.endCh)
	}
}

// checkInSyncLocked: a leader outside its own in-sync set has had its
// disk replaced (meta.ReplaceDisk) since it was elected, the metastore
// counts none of its copies: it serves nothing until the controller
// elects another (ErrStateLost).
func (l *Leader) checkInSyncLocked() {
	if l.stateErr == nil && !slices.Contains(l.view.InSync, l.cfg.Self) {
		l.stateErr = ErrStateLost
	}
}

func (l *Leader) checkReadyLocked() {
	if l.ready || l.renewing || l.stateErr != nil || l.ended != nil {
		return
	}
	s, ok := startOf(l.view.EpochStarts, l.view.Epoch)
	if !ok {
		return
	}
	if s.Offset > l.log.End() {
		l.stateErr = ErrStateLost
		return
	}
	l.ready = true
}

// Writable is nil when a commit may be written to the log now: the
// leader is ready and still leads.
func (l *Leader) Writable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writableLocked()
}

func (l *Leader) writableLocked() error {
	switch {
	case l.ended != nil:
		return l.ended
	case l.stateErr != nil:
		return l.stateErr
	case !l.ready:
		return ErrNotReady
	}
	return nil
}

// WaitCommitted returns nil once the committed point is past last (the
// record at offset last is acknowledged), the leadership's end error if
// it ends first (ErrDeposed: the record may or may not survive, it was
// not acknowledged), ErrNotReady before the epoch start is recorded, or
// ctx's error.
func (l *Leader) WaitCommitted(ctx context.Context, last uint64) error {
	// The caller's commit returned: its records are durable here, and the
	// leader's own acknowledgement (its End) moved, which no follower's
	// fetch reports when the followers copied them first.
	l.mu.Lock()
	l.advanceLocked()
	l.checkLocked()
	l.mu.Unlock()
	for {
		l.mu.Lock()
		if l.committed > last {
			l.mu.Unlock()
			return nil
		}
		if err := l.writableLocked(); err != nil {
			l.mu.Unlock()
			return err
		}
		ch := l.commitCh
		l.mu.Unlock()
		select {
		case <-ch:
		case <-l.endCh:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Committed is the committed point: every record below it is durable on
// every in-sync replica.
func (l *Leader) Committed() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.committed
}

// advanceLocked recomputes the committed point: the minimum durable end
// over the stricter in-sync set (the leader's End() included), only while
// the set has a majority; it never moves down.
func (l *Leader) advanceLocked() {
	if !l.ready || l.ended != nil {
		return
	}
	if len(l.view.InSync) < meta.Majority(len(l.view.Replicas)) {
		return
	}
	hw := l.log.End()
	for _, n := range l.strictSetLocked() {
		if n == l.cfg.Self {
			continue
		}
		p := l.peers[n]
		if p == nil || !p.known {
			return // an in-sync member not heard from in this epoch
		}
		hw = min(hw, p.acked)
	}
	if hw <= l.committed {
		return
	}
	l.committed = hw
	l.waitingSince, l.stall = time.Time{}, ""
	// A failed release leaves readers behind, not the commit: a majority
	// holds the records. The next advance retries it.
	l.releaseErr = l.log.Release(hw)
	close(l.commitCh)
	l.commitCh = make(chan struct{})
}

// strictSetLocked is the in-sync set the committed point is computed
// over: the view's, joined with the one in flight and those that may
// still apply.
func (l *Leader) strictSetLocked() []string {
	if l.pending == nil && len(l.uncertain) == 0 {
		return l.view.InSync
	}
	set := slices.Clone(l.view.InSync)
	for _, s := range append([][]string{l.pending}, l.uncertain...) {
		for _, n := range s {
			if !slices.Contains(set, n) {
				set = append(set, n)
			}
		}
	}
	return set
}

// syncPeersLocked keeps one peer per follower of the view; a new one
// starts caught up now (it gets LagMax to show up).
func (l *Leader) syncPeersLocked(now time.Time) {
	for _, n := range l.view.Replicas {
		if n != l.cfg.Self && l.peers[n] == nil {
			l.peers[n] = &peer{caughtUpAt: now}
		}
	}
	for n := range l.peers {
		if !slices.Contains(l.view.Replicas, n) {
			delete(l.peers, n)
		}
	}
}

// checkpoint writes the committed point to replica.state when it moved
// (and CheckpointEvery passed, unless force).
func (l *Leader) checkpoint(force bool) error {
	l.mu.Lock()
	now := l.clk.Now()
	c := l.committed
	if c <= l.checkpointed || (!force && now.Sub(l.checkpointedAt) < l.cfg.CheckpointEvery) {
		l.mu.Unlock()
		return nil
	}
	st := l.log.ReplicaState()
	l.mu.Unlock()
	if st.Committed >= c {
		return nil
	}
	st.Committed = c
	if err := l.log.SaveReplicaState(st); err != nil {
		return err
	}
	l.mu.Lock()
	l.checkpointed, l.checkpointedAt = c, now
	l.mu.Unlock()
	return nil
}

func startOf(starts []meta.EpochStart, epoch uint64) (meta.EpochStart, bool) {
	for _, s := range starts {
		if s.Epoch == epoch {
			return s, true
		}
	}
	return meta.EpochStart{}, false
}

func cloneView(v View) View {
	v.Replicas = slices.Clone(v.Replicas)
	v.InSync = slices.Clone(v.InSync)
	v.EpochStarts = slices.Clone(v.EpochStarts)
	return v
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, n := range a {
		if !slices.Contains(b, n) {
			return false
		}
	}
	return true
}
