package hosted

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/storage"
)

// Hosting replicated partitions (docs/replication.md; the protocol is package
// replica's).
//
// For every partition of a replicated topic that names this node among its
// Replicas, the broker opens the log held (readers see only what a quorum
// has) and runs the engine's role for it: a Leader when this node is the
// partition's Owner, a Follower otherwise. A reconcile pass (on every
// metastore change, and each second) compares what runs with the
// placement and stops one role before starting the other when the leader,
// the epoch or the membership changes; InSync and EpochStarts changes
// reach the running role as an Update. A held log with a live role is
// never idle-evicted: a follower writes to it and a leader answers
// fetches from it.
//
// The engine is behind ReplicaEngine (the server wires package replica's
// Leader and Follower to node RPC and the metastore), so the broker's
// tests drive hosting with a fake.

// ReplicaEngine builds the replication engine's two Roles for one
// partition hosted here.
type ReplicaEngine interface {
	// NewLeader leads the partition at v.Epoch over l. frontier reads the
	// consumer frontier persisted here (FetchResponse.Frontier); state is
	// the side state snapshot (sidestate.go) fetch answers carry.
	NewLeader(l replica.Log, v replica.View, frontier func() uint64, state func() replica.SideState) (ReplicaLeader, error)
	// NewFollower follows v.Leader at v.Epoch into l; onFrontier is told
	// the leader's frontier from each fetch answer, onState its side
	// state when it changed (an error: not applied, sent again).
	NewFollower(l replica.Log, v replica.View, onFrontier func(uint64), onState func(replica.SideState) error) (ReplicaFollower, error)
}

// ReplicaLeader is a running leader of one partition (*replica.Leader).
type ReplicaLeader interface {
	// Start takes over (cuts, writes the epoch, proposes its start) and
	// runs the in-sync checks until Close; the leader is writable once an
	// Update carries its epoch start.
	Start(ctx context.Context) error
	// Writable is nil while commits may be written: ready, still leading.
	Writable() error
	HandleFetch(ctx context.Context, req replica.FetchRequest) (replica.FetchResponse, error)
	// WaitCommitted returns once the committed point passes offset.
	WaitCommitted(ctx context.Context, offset uint64) error
	Update(v replica.View)
	Close() error
	Stats() replica.LeaderStats
}

// ReplicaFollower is a running follower of one partition
// (*replica.Follower).
type ReplicaFollower interface {
	// Run fetches until ctx ends, or returns nil once the view says this
	// node leads.
	Run(ctx context.Context) error
	Update(v replica.View)
	// Close checkpoints the committed point (after Run returned).
	Close() error
	// Unreachable is the leader this follower's fetches have not
	// reached, and since when; ok false while they are answered.
	Unreachable() (u replica.Unreachable, ok bool)
}

// frontierCopyEvery is how often a follower writes the leader's consumer
// frontier into its own frontier file.
const frontierCopyEvery = time.Second

// Role is one partition's running role.
type Role struct {
	key      Key
	view     replica.View
	log      *storage.Log
	leader   ReplicaLeader   // nil on a follower
	follower ReplicaFollower // nil on a leader
	cancel   context.CancelFunc
	done     chan struct{}

	started    time.Time
	readyNoted bool // the leader's readiness was counted (reconcile's goroutine only)
	// The leader's stalls counted and whether one is on (noteStall;
	// reconcile's goroutine only).
	stalls  uint64
	stalled bool

	fmu        sync.Mutex
	frontierAt time.Time // when the leader's frontier was last written here
	frontier   uint64

	side sideState // delivery counts and cursor positions (sidestate.go)

	// commits is held shared by every commit written to the log under
	// this role (commit, produce.go) and exclusively by stopReplica
	// before anything else, which then sets stopped: no commit accepted
	// while this role led lands in the log after it stopped — a follower
	// started next would take such a stray record for one of its
	// leader's, and acknowledge it by its next fetch.
	commits sync.RWMutex
	stopped bool // under commits
}

// Roles runs the replication engine's role for every replicated
// partition hosted here (this file, sidestate.go, release.go). It holds
// what a role needs and nothing of the request-level broker: its
// configuration, the metastore, the metrics, the hosted partitions, and
// Wake, which fires a topic's broadcast for the consumers parked on it.
type Roles struct {
	cfg   RolesConfig
	meta  *meta.Store
	m     *metrics.Metrics
	parts *Set
	life  context.Context // ends at Close: a role's goroutine stops then
	wake  func(topic string)

	mu      sync.Mutex
	running map[Key]*Role
	// stopped is set at Close: nothing starts again.
	stopped bool
	// events is closed (and cleared) at the next change a commit held by
	// AwaitLeaderRole may be waiting for (noteRoleEvent); nil: nobody
	// waits.
	events chan struct{}
}

// RolesConfig is what the roles need to know of their node.
type RolesConfig struct {
	NodeID string
	// Replication builds the roles (the server wires package replica's
	// Leader and Follower to node RPC and the metastore); nil: no
	// partition is replicated here.
	Replication ReplicaEngine
	// Fenced says this node's lease has lapsed: a leader may not serve.
	Fenced func() bool
	// ReplicaCommitWait bounds how long a commit waits for its quorum.
	ReplicaCommitWait time.Duration
	// TakeoverWait bounds how long a commit waits for this node to take
	// over a leadership the metastore gave it (AwaitLeaderRole); 0: it
	// does not wait.
	TakeoverWait time.Duration
	// CursorCopies are the fan-out engine's cursor files (sidestate.go);
	// nil: none are copied.
	CursorCopies CursorCopies
	Now          func() time.Time
	Logger       *slog.Logger
}

// NewRoles builds the roles of the replicated partitions among parts.
// life ends when the node stops; wake fires a topic's broadcast.
func NewRoles(cfg RolesConfig, ms *meta.Store, m *metrics.Metrics, parts *Set, life context.Context, wake func(topic string)) *Roles {
	return &Roles{cfg: cfg, meta: ms, m: m, parts: parts, life: life, wake: wake}
}

// Hold lets a commit be written under this role: release must be called
// once the write returned; ok is false when the role has stopped (then
// nothing may be written under it). See Role.commits.
func (h *Role) Hold() (release func(), ok bool) {
	h.commits.RLock()
	if h.stopped {
		h.commits.RUnlock()
		return nil, false
	}
	return h.commits.RUnlock, true
}

func partLabel(p int) string { return strconv.Itoa(p) }

func (r *Roles) hosted(topic string, p int) *Role {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[Key{Topic: topic, Partition: p}]
}

// HostsReplica reports whether a role runs for the partition here (its log
// is then never idle-evicted).
func (r *Roles) HostsReplica(topic string, p int) bool { return r.hosted(topic, p) != nil }

// ReplicatedHere reports whether the partition is replicated and this node
// is one of its replicas: its log must be opened held.
func (r *Roles) ReplicatedHere(topic string, p int) bool {
	t, ok := r.meta.Topic(topic)
	if !ok || t.ReplicationFactor <= 1 {
		return false
	}
	as := r.meta.Assignments(topic)
	return p >= 0 && p < len(as) && as[p].Replicated() && slices.Contains(as[p].Replicas, r.cfg.NodeID)
}

// Run reconciles on every metastore change, and each second (a
// leader that could not start is retried), until stop closes.
func (r *Roles) Run(stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		ch := r.meta.Watch()
		r.reconcileReplicas()
		select {
		case <-stop:
			return
		case <-ch:
		case <-t.C:
		}
	}
}

// reconcileReplicas makes the running Roles match the placement.
func (r *Roles) reconcileReplicas() {
	if r.cfg.Replication == nil {
		return
	}
	want := map[Key]replica.View{}
	for _, t := range r.meta.Topics() {
		if t.ReplicationFactor <= 1 || t.Remote != nil {
			continue
		}
		for _, a := range r.meta.Assignments(t.Name) {
			if a.Replicated() && slices.Contains(a.Replicas, r.cfg.NodeID) && a.LeaderEpoch > 0 {
				want[Key{Topic: t.Name, Partition: a.Partition}] = replica.ViewOf(t.Incarnation, a)
			}
		}
	}
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	var stop, reopen []*Role
	var update []*Role
	for k, h := range r.running {
		v, ok := want[k]
		switch {
		case !ok || roleChanged(h, v, r.cfg.NodeID):
			stop = append(stop, h)
			delete(r.running, k)
		case h.log.LostPublished():
			// An fdatasync failed after records were published: on a
			// leader, records its followers could copy; on either role,
			// journaled records the segment may have lost (package
			// journal). This log cannot vouch for them, and a leader must
			// not write in its epoch again. Stop the role, reopen the log
			// from what the disk and the journal hold (as a restart
			// would: storage.Open restores the journaled records first),
			// and start the role again: a new leader renews the epoch
			// (replica.Leader.begin), its start at the reopened end; a
			// follower fetches on from its end.
			reopen = append(reopen, h)
			delete(r.running, k)
		case !sameView(h.view, v):
			h.view = v
			update = append(update, h)
		}
	}
	r.mu.Unlock()
	for _, h := range stop {
		r.stopReplica(h)
	}
	for _, h := range reopen {
		r.stopReplica(h)
		r.parts.ClosePartition(h.key.Topic, h.key.Partition)
		r.cfg.Logger.Warn("replicated partition log may have lost records it had published (a failed fdatasync); reopened from its disk and the journal, and a leadership renews the epoch",
			"topic", h.key.Topic, "partition", h.key.Partition, "epoch", h.view.Epoch, "leader", h.leader != nil)
	}
	for _, h := range update {
		if h.leader != nil {
			h.leader.Update(h.view)
		} else {
			h.follower.Update(h.view)
		}
	}
	for k, v := range want {
		if r.hosted(k.Topic, k.Partition) == nil {
			if err := r.startReplica(k, v); err != nil {
				r.m.Errors.WithLabelValues("broker", "replica_start").Inc()
				r.cfg.Logger.Warn("replica not started; retried", "topic", k.Topic, "partition", k.Partition, "err", err)
			}
		}
	}
	r.gaugeReplicas(want)
	// Roles started, stopped and updated (an Update can make a leader
	// ready): the commits held for a takeover look again.
	r.noteRoleEvent()
}

// roleChanged: a new leader, a new epoch or an incarnation is a new role;
// the rest of a view is an Update.
func roleChanged(h *Role, v replica.View, self string) bool {
	return h.view.Leader != v.Leader || h.view.Epoch != v.Epoch || h.view.Incarnation != v.Incarnation ||
		(h.leader != nil) != (v.Leader == self)
}

// sameView reports whether a running role has nothing new to learn from
// b. Every field of a View that roleChanged does not compare is compared
// here (TestEveryViewFieldReachesTheRole): a leader that never learns a
// new InSyncVersion proposes on the old one forever.
func sameView(a, b replica.View) bool {
	return slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.InSync, b.InSync) && slices.Equal(a.EpochStarts, b.EpochStarts) &&
		a.InSyncVersion == b.InSyncVersion
}

// startReplica opens the partition's log held and starts its role.
func (r *Roles) startReplica(k Key, v replica.View) error {
	l, err := r.heldLog(k.Topic, k.Partition)
	if err != nil {
		return err
	}
	h := &Role{key: k, view: v, log: l, done: make(chan struct{}), started: r.cfg.Now()}
	if v.Leader == r.cfg.NodeID {
		wl := wakingLog{Log: l, roles: r, topic: k.Topic}
		h.leader, err = r.cfg.Replication.NewLeader(wl, v, r.leaderFrontier(k),
			func() replica.SideState { return r.leaderSideState(h) })
	} else {
		r.parts.DropQueue(k.Topic, k.Partition) // a lease table of an earlier leadership here is stale
		h.follower, err = r.cfg.Replication.NewFollower(l, v, func(f uint64) { r.copyFrontier(h, f) },
			func(st replica.SideState) error { return r.applySideState(h, st) })
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.life)
	h.cancel = cancel
	r.mu.Lock()
	if r.stopped || r.running[k] != nil {
		r.mu.Unlock()
		cancel()
		if h.leader != nil {
			h.leader.Close()
		}
		return nil
	}
	if r.running == nil {
		r.running = map[Key]*Role{}
	}
	r.running[k] = h
	r.mu.Unlock()
	go func() {
		defer close(h.done)
		if h.leader != nil {
			// A leader that cannot take over (it lost its state) stays
			// here never writable, until the controller elects another.
			if err := h.leader.Start(ctx); err != nil {
				r.cfg.Logger.Error("cannot lead replicated partition", "topic", k.Topic, "partition", k.Partition, "epoch", v.Epoch, "err", err)
			}
			// Start makes a leader whose epoch start is recorded (a
			// new topic's epoch 1) ready: commits held for it go on.
			r.noteRoleEvent()
			<-ctx.Done()
			return
		}
		err := h.follower.Run(ctx)
		h.follower.Close()
		if err != nil && ctx.Err() == nil {
			r.cfg.Logger.Warn("replica stopped following", "topic", k.Topic, "partition", k.Partition, "err", err)
			r.mu.Lock()
			if r.running[k] == h {
				delete(r.running, k) // the next reconcile starts it again, if still placed here
			}
			r.mu.Unlock()
		}
	}()
	return nil
}

// noteReady counts and logs a leader that became writable (reconcile's
// goroutine), and wakes consumers parked while it took over.
func (r *Roles) noteReady(h *Role) {
	if h.leader == nil || h.readyNoted {
		return
	}
	if err := h.leader.Writable(); err != nil {
		if since := r.cfg.Now().Sub(h.started); since > 5*time.Second && since%(5*time.Second) < time.Second {
			r.cfg.Logger.Warn("replicated partition led here is not writable yet", "topic", h.key.Topic, "partition", h.key.Partition,
				"epoch", h.view.Epoch, "epoch_starts", h.view.EpochStarts, "end", h.log.End(), "for", since, "err", err)
		}
		return
	}
	h.readyNoted = true
	r.m.LeaderChanges.WithLabelValues(h.key.Topic, partLabel(h.key.Partition)).Inc()
	r.cfg.Logger.Info("leading replicated partition", "topic", h.key.Topic, "partition", h.key.Partition,
		"epoch", h.view.Epoch, "took", r.cfg.Now().Sub(h.started))
	r.wake(h.key.Topic)
}

// heldLog returns the partition's log opened held, reopening one that an
// earlier placement (a single copy) opened plain.
func (r *Roles) heldLog(topic string, p int) (*storage.Log, error) {
	l, err := r.parts.Get(topic, p)
	if err != nil || r.parts.IsHeld(topic, p) {
		return l, err
	}
	r.parts.ClosePartition(topic, p)
	return r.parts.Get(topic, p)
}

// stopReplica ends a role and waits for it. A leader's lease table goes
// with its leadership: the next leader's frontier is the one to follow.
func (r *Roles) stopReplica(h *Role) {
	// First let every commit written under this role finish, and refuse
	// the rest (Role.commits).
	h.commits.Lock()
	h.stopped = true
	h.commits.Unlock()
	// Cancel, wait, then Close: Close must not race the Start that the
	// role's goroutine may still be in.
	h.cancel()
	<-h.done
	if h.leader != nil {
		h.leader.Close()
	}
	if h.leader != nil {
		if q := r.parts.PeekQueue(h.key.Topic, h.key.Partition); q != nil {
			q.Persist()
			q.PersistCounts(true)
		}
		r.parts.DropQueue(h.key.Topic, h.key.Partition)
	}
	r.m.ReplicasInSync.DeleteLabelValues(h.key.Topic, partLabel(h.key.Partition))
	r.m.ReplicationLagRecords.DeleteLabelValues(h.key.Topic, partLabel(h.key.Partition))
	r.m.ReplicationLagSeconds.DeleteLabelValues(h.key.Topic, partLabel(h.key.Partition))
	r.m.CommitStallSeconds.DeleteLabelValues(h.key.Topic, partLabel(h.key.Partition))
}

// Close stops every role (Close), before the logs close.
func (r *Roles) Close() {
	r.mu.Lock()
	r.stopped = true
	parts := r.running
	r.running = nil
	r.mu.Unlock()
	for _, h := range parts {
		r.stopReplica(h)
	}
}

// Gate says whether a replicated partition may be served here now
// (commits, consume, ack, replay): only by a leader that is ready and
// whose node still holds its lease (Config.Fenced). nil for a partition
// placed with a single copy (on this node, which the callers check).
func (r *Roles) Gate(t meta.Topic, p int) error {
	_, err := r.LeaderRole(t, p)
	return err
}

// LeaderRole is Gate that also returns the role it checked (nil
// for a single copy): a commit is written under that role's commit lock
// and waits for that leader's quorum (AwaitQuorum), never for whichever
// role the partition has by the time the write returns.
func (r *Roles) LeaderRole(t meta.Topic, p int) (*Role, error) {
	h, _, err := r.leaderRole(t, p)
	return h, err
}

// AwaitLeaderRole is LeaderRole for a commit. When the metastore has
// made this node the partition's leader but the node has not taken the
// leadership over yet — its role not started (the reconcile that starts
// it runs just after the metastore change), started and its epoch start
// not yet in its view (Writable: replica.ErrNotReady), or still the
// Leader of an epoch that ended while the next one is this node's again
// (a restarted node renews its epoch) — the commit waits for the role,
// at most Config.TakeoverWait and while ctx lasts, and then asks
// LeaderRole again: a new replicated topic, or a leader just elected,
// takes its first produces instead of answering them 503. The wait
// changes no rule: the answer is still LeaderRole's, so a leader serves
// only once it holds its epoch, and a fenced node or a leader deposed
// for another node is refused (at once, not held). Past the bound the
// refusal is the 503 it was, with its Retry-After.
func (r *Roles) AwaitLeaderRole(ctx context.Context, t meta.Topic, p int) (*Role, error) {
	var bound <-chan time.Time
	for {
		changed := r.roleEvents() // before the look, so no change is missed
		h, takingOver, err := r.leaderRole(t, p)
		if err == nil || !takingOver || r.cfg.TakeoverWait <= 0 {
			return h, err
		}
		if bound == nil {
			tm := time.NewTimer(r.cfg.TakeoverWait)
			defer tm.Stop()
			bound = tm.C
		}
		select {
		case <-changed:
		case <-bound:
			return nil, err
		case <-ctx.Done():
			return nil, err
		case <-r.life.Done():
			return nil, err
		}
	}
}

// roleEvents is closed at the next noteRoleEvent.
func (r *Roles) roleEvents() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.events == nil {
		r.events = make(chan struct{})
	}
	return r.events
}

// noteRoleEvent wakes the commits waiting in AwaitLeaderRole: a role
// started, stopped, took over or learned a new view.
func (r *Roles) noteRoleEvent() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.events != nil {
		close(r.events)
		r.events = nil
	}
}

// leaderRole is LeaderRole, and whether its refusal is a leadership this
// node is taking over (AwaitLeaderRole may wait for it).
func (r *Roles) leaderRole(t meta.Topic, p int) (*Role, bool, error) {
	if t.ReplicationFactor <= 1 {
		return nil, false, nil
	}
	h := r.hosted(t.Name, p)
	if h == nil || h.leader == nil {
		if !r.ReplicatedHere(t.Name, p) {
			return nil, false, nil // not (yet) placed as a replicated partition: a single copy
		}
		owner, _ := r.meta.Owner(t.Name, p)
		return nil, owner == r.cfg.NodeID, refusal.New(refusal.ErrNotReady, time.Second, "partition %d of %q is taking over its leadership on this node: retry", p, t.Name)
	}
	if err := h.leader.Writable(); err != nil {
		if errors.Is(err, replica.ErrDeposed) {
			// The role's Leader ended, and the reconcile has not replaced
			// it yet. Refused before anything is written, so not_ready
			// (package refusal): a node that forwarded the commit holds
			// it for the next leader. When that is this node again (a
			// restarted node renews its epoch, replica.Leader.begin),
			// AwaitLeaderRole waits here for the next epoch's Leader.
			owner, _ := r.meta.Owner(t.Name, p)
			return nil, owner == r.cfg.NodeID, refusal.New(refusal.ErrNotReady, 200*time.Millisecond,
				"partition %d of %q: this node's leadership of it ended (a new epoch): retry", p, t.Name)
		}
		return nil, errors.Is(err, replica.ErrNotReady), replicaRefusal(err, t.Name, p)
	}
	if r.cfg.Fenced != nil && r.cfg.Fenced() {
		return nil, false, refusal.New(refusal.ErrNotReady, time.Second, "partition %d of %q: this node has not heard from the cluster within its lease, so another node may lead it now; it serves again once it hears: retry", p, t.Name)
	}
	// The role's view can lag the metastore replica the lease reads: a
	// node back on a wiped disk stops being fenced as soon as its replica
	// records the new disk, and the same entry takes it out of every
	// in-sync set, but the role learns that only at the next reconcile.
	// A write in between would land in an empty log as a record of the
	// old epoch, below the history its followers hold, that no cut
	// removes. Read after the lease, the placement has that entry. (An
	// election takes the old leader out of the set too: a deposed role
	// is refused here as well.)
	if a, ok := r.meta.Placement(t.Name, p); !ok || !slices.Contains(a.InSync, r.cfg.NodeID) {
		return nil, false, refusal.New(refusal.ErrNotReady, time.Second, "partition %d of %q: this node's leadership is changing (a new leader, or its disk was replaced): retry", p, t.Name)
	}
	return h, false, nil
}

func (r *Roles) Fetch(ctx context.Context, req replica.FetchRequest) (replica.FetchResponse, error) {
	h := r.hosted(req.Topic, req.Partition)
	if h == nil || h.leader == nil {
		return replica.FetchResponse{}, refusal.New(refusal.ErrNotLeader, 200*time.Millisecond, "partition %d of %q is not led by this node", req.Partition, req.Topic)
	}
	if req.Incarnation != 0 && h.view.Incarnation != 0 && req.Incarnation != h.view.Incarnation {
		return replica.FetchResponse{}, refusal.New(refusal.ErrStaleEpoch, 200*time.Millisecond, "partition %d of %q: fetch for incarnation %d, this node leads incarnation %d", req.Partition, req.Topic, req.Incarnation, h.view.Incarnation)
	}
	if r.cfg.Fenced != nil && r.cfg.Fenced() {
		return replica.FetchResponse{}, refusal.New(refusal.ErrNotReady, time.Second, "partition %d of %q: the leader's lease lapsed", req.Partition, req.Topic)
	}
	resp, err := h.leader.HandleFetch(ctx, req)
	if err != nil {
		return resp, replicaRefusal(err, req.Topic, req.Partition)
	}
	return resp, nil
}
