package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
)

// Timing of membership, and of replicated partitions (docs/replication.md).
//
// A replicated partition's failover is bounded by these numbers: a leader
// that dies is replaced FailoverAfter after its last heartbeat reached the
// metastore leader, seen by a controller that looks every FailoverEvery;
// when the dead node also led the metastore, a Raft election (1-2 s with
// hashicorp/raft's cluster timings) comes first and the new controller
// counts the silence from the moment it noticed that it leads.
const (
	JoinEvery = 2 * time.Second
	// HeartbeatEvery is how often a node tells the leader it lives: three
	// are sent within a lease (FenceAfter), so one lost heartbeat never
	// fences a node. Heartbeats go one at a time, each waiting up to
	// FenceAfter: an answer slower than HeartbeatEvery delays the next,
	// and answers that together take longer than the lease fence it.
	HeartbeatEvery = 500 * time.Millisecond
	// RecordEvery is how often, at most, the leader writes a member's
	// heartbeat into its record (a Raft write): the record only serves
	// dead marking, which is 30 s coarse. Liveness for failover is the
	// leader's in-memory view (Node.lastSeen), updated by every heartbeat.
	RecordEvery = 5 * time.Second
	DeadAfter   = 30 * time.Second
	// FenceAfter: a node whose last heartbeat answered by the metastore
	// leader was sent longer ago than this is fenced (Fenced): it stops
	// serving replicated partitions.
	FenceAfter = 1500 * time.Millisecond
	// FailoverAfter: the controller elects a new leader for a replicated
	// partition whose leader it has not heard from for this long.
	// It exceeds FenceAfter, so the old leader has fenced itself by then
	// (PacificA: the lease ends before the configuration manager acts).
	// The second of difference is the margin for a metastore leader
	// change: a heartbeat is answered only after the answering leader
	// confirmed its leadership with a quorum (HandleHeartbeat), so no
	// answer was sent for a heartbeat sent after a new leader's election
	// beyond the messages then in flight, and a new controller counts
	// silence from no earlier than that election (tick).
	FailoverAfter = 2500 * time.Millisecond
	// FailoverEvery is the controller's turn on the leader: it notes that
	// it leads and looks for silent partition leaders this often; the
	// rest of control (dead marking, placement, replicas, moves) runs at
	// most every ControlEvery.
	FailoverEvery = 250 * time.Millisecond
	// ControlEvery is the controller's tick on the leader.
	ControlEvery = time.Second
	// recordRetry is how often a new node heartbeats until the leader has
	// recorded it: placement and routing need every member's record.
	recordRetry = 200 * time.Millisecond
	// callTimeout bounds one join call.
	callTimeout = 5 * time.Second
)

// FenceAfter < FailoverAfter, checked by the compiler: a negative
// difference does not convert to an unsigned constant.
const _ = uint64(FailoverAfter - FenceAfter - 1)

// Node is this node's membership: it joins, heartbeats, and on the leader
// runs the controller. Every rule of time here reads Clock.
type Node struct {
	Self      meta.Member // this node's addresses
	Meta      *meta.Store
	Transport Transport
	Peers     []string // RPC addresses of the configured peers, for joining
	Log       *slog.Logger
	Clock     clock.Clock // nil: the system clock
	// Timings: the zero value is LANTimings (timings.go). Checked by
	// the caller (Timings.Check).
	Timings Timings
	// HealAfter: a replicated partition's copy on a member this controller
	// has not heard from for longer is re-created on another node
	// (heal.go); 0 never.
	HealAfter time.Duration
	// Heals counts the heals this controller started
	// (narad_replica_heals_total); nil: not counted.
	Heals interface{ Inc() }
	// Unreachable lists the leaders this node's followers have not
	// reached (unreachable.go), sent with every heartbeat; nil: none.
	Unreachable func() []LeaderReport
	// CutOffElections counts the leaderships this controller moved off a
	// leader a majority of copies could not reach
	// (narad_replica_cut_off_elections_total); nil: not counted.
	CutOffElections interface{ Inc() }

	leaderSince time.Time // when this node last became leader (controller only)
	leaderTerm  uint64    // the Raft term leaderSince belongs to (controller writes it, under mu)
	controlled  time.Time // the last full control turn (controller only)
	// copyLeft is when the controller last removed a draining member's
	// replicated copy (drain.go; controller goroutine only): retire waits
	// RetireGrace after it.
	copyLeft map[string]time.Time
	// blocked is what the controller last logged of each draining
	// member's blocked partitions (blocked.go; controller goroutine only).
	blocked map[string]string

	mu       sync.Mutex
	lastSeen map[string]seenAt    // leader: when each member's last heartbeat arrived
	lastDisk map[string]string    // leader: the disk id each member's last heartbeat announced
	reports  map[string]reportsAt // leader: each member's latest unreachable-leader reports
	// handedOff is when this controller last elected each partition's
	// leader (controller goroutine only; unreachable.go).
	handedOff map[partKey]time.Time
	// answered is when (clock, unix ns) the last heartbeat the metastore
	// leader answered was sent; 0: none yet.
	answered atomic.Int64
}

func (n *Node) clock() clock.Clock { return clock.Or(n.Clock) }

// Run joins (if needed), then heartbeats every HeartbeatEvery and, while
// leading, runs the controller every FailoverEvery, until ctx ends. The
// two run apart, so a slow controller turn never delays a heartbeat (and
// never fences the leader's own partitions).
func (n *Node) Run(ctx context.Context) {
	clk := n.clock()
	n.join(ctx)
	// Until the leader has recorded this node, try often.
	for ctx.Err() == nil {
		n.heartbeat(ctx)
		if n.Recorded() {
			break
		}
		if clock.Sleep(ctx, clk, recordRetry) != nil {
			return
		}
	}
	beats := make(chan struct{})
	go func() { defer close(beats); n.every(ctx, n.timings().HeartbeatEvery, n.heartbeat) }()
	n.every(ctx, FailoverEvery, n.tick)
	<-beats
}

// every runs duty every period until ctx ends; a turn that fell behind
// skips its missed turns (as a ticker drops ticks).
func (n *Node) every(ctx context.Context, period time.Duration, duty func(context.Context)) {
	clk := n.clock()
	next := clk.Now().Add(period)
	for {
		if clock.Sleep(ctx, clk, next.Sub(clk.Now())) != nil {
			return
		}
		now := clk.Now()
		duty(ctx)
		next = following(next, period, now)
	}
}

// following is the first turn of a duty due every period after at, that
// lies after now.
func following(at time.Time, period time.Duration, now time.Time) time.Time {
	for !at.After(now) {
		at = at.Add(period)
	}
	return at
}

// join walks the peers every JoinEvery until this node's own Raft sees a
// leader and lists it as a voter: admission is proved locally, not taken
// on a peer's word. A peer that is not the leader names it; the join is
// asked there at once.
func (n *Node) join(ctx context.Context) {
	for !n.Meta.Admitted() {
		for _, addr := range n.Peers {
			if n.Meta.Admitted() || ctx.Err() != nil {
				break
			}
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			res, err := n.Transport.Join(cctx, addr, n.Self)
			if err == nil && !res.Admitted && res.LeaderRPCAddr != "" {
				_, err = n.Transport.Join(cctx, res.LeaderRPCAddr, n.Self)
			}
			cancel()
			if err != nil {
				n.Log.Debug("join attempt failed", "peer", addr, "err", err)
			}
		}
		if clock.Sleep(ctx, n.clock(), JoinEvery) != nil {
			return
		}
	}
}

// heartbeat tells the leader this node lives (the leader notes it, and
// records it now and then). An answered heartbeat renews this node's
// lease (Fenced); on the leader itself the answer is a quorum confirming
// it still leads (ConfirmLeader: no log write).
func (n *Node) heartbeat(ctx context.Context) {
	sent := n.clock().Now()
	cctx, cancel := context.WithTimeout(ctx, n.timings().FenceAfter) // a later answer renews nothing
	defer cancel()
	var reports []LeaderReport
	if n.Unreachable != nil {
		reports = n.Unreachable()
	}
	if n.Meta.IsLeader() {
		if err := n.admitDisk(cctx, n.Self); err != nil {
			n.Log.Warn("own heartbeat not counted", "err", err)
			return
		}
		if err := n.Meta.ConfirmLeader(cctx); err == nil {
			n.noteSeen(n.Self.ID, sent, n.Meta.Term())
			n.noteReports(n.Self.ID, sent, n.Meta.Term(), reports)
			n.noteAnswered(sent)
		}
		if err := n.recordDue(cctx, n.Self); err != nil {
			n.Log.Debug("recording own heartbeat failed", "err", err)
		}
		return
	}
	addr := Directory{Meta: n.Meta}.LeaderRPC()
	if addr == "" {
		return
	}
	if err := n.Transport.Heartbeat(cctx, addr, n.Self, reports); err != nil {
		n.Log.Debug("heartbeat failed", "leader", addr, "err", err)
		return
	}
	n.noteAnswered(sent)
}

// Fenced reports whether this node has lost its lease: its last heartbeat
// the metastore leader answered (on the leader: its own, confirmed by a
// quorum) was sent more than FenceAfter ago, or none was ever answered.
// A fenced node serves no replicated partition: by FailoverAfter the
// controller may have elected another leader for it. A node is fenced too
// while its metastore replica does not record the disk it runs on
// (Self.DiskID): that replica may still count its copies from a disk
// since wiped.
func (n *Node) Fenced() bool {
	at := n.answered.Load()
	return at == 0 || n.clock().Now().Sub(time.Unix(0, at)) > n.timings().FenceAfter || !n.ownDiskRecorded()
}

// Answered reports whether the metastore leader has answered a heartbeat
// of this node since it started (on the leader: one of its own, confirmed
// by a quorum). Until then the node is fenced (Fenced), whatever else it
// knows: a restarted node refuses the writes of the replicated partitions
// it leads until its first heartbeat is answered.
func (n *Node) Answered() bool { return n.answered.Load() != 0 }

func (n *Node) noteAnswered(sent time.Time) {
	v := sent.UnixNano()
	for {
		old := n.answered.Load()
		if old >= v || n.answered.CompareAndSwap(old, v) {
			return
		}
	}
}

// seenAt is a heartbeat's arrival and the Raft term of the leadership
// that answered it.
type seenAt struct {
	at   time.Time
	term uint64
}

func (n *Node) noteSeen(id string, at time.Time, term uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lastSeen == nil {
		n.lastSeen = map[string]seenAt{}
	}
	if old := n.lastSeen[id]; term > old.term || (term == old.term && at.After(old.at)) {
		n.lastSeen[id] = seenAt{at: at, term: term}
	}
}

// seen is when this leader last heard from id in its current term (zero:
// not since it leads). A heartbeat answered in an earlier term of this
// node's leadership does not count: another leader may have renewed the
// member's lease in between.
func (n *Node) seen(id string) time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.lastSeen[id]; s.term == n.leaderTerm {
		return s.at
	}
	return time.Time{}
}

// Recorded reports whether this node's member record is in the replica.
func (n *Node) Recorded() bool {
	_, ok := n.Meta.Member(n.Self.ID)
	return ok
}

// recordDue records a heartbeat unless the member's record is alive, has
// the same addresses, and was written less than RecordEvery ago: the
// Raft cost of heartbeats stays what it was at one every 5 s.
func (n *Node) recordDue(ctx context.Context, m meta.Member) error {
	old, ok := n.Meta.Member(m.ID)
	if ok && old.State != meta.MemberDead && old.RaftAddr == m.RaftAddr && old.RPCAddr == m.RPCAddr &&
		old.HTTPAddr == m.HTTPAddr && (m.DiskID == "" || old.DiskID == m.DiskID) && n.clock().Now().UnixMilli()-old.LastHeartbeatMs < RecordEvery.Milliseconds() {
		return nil
	}
	return n.record(ctx, m)
}

// record upserts a member as alive with a fresh heartbeat (leader only),
// keeping its drain flag: a decommission survives the node's restarts. A
// recorded disk id stays (meta changes it only by ReplaceDisk, admitDisk).
func (n *Node) record(ctx context.Context, m meta.Member) error {
	old, _ := n.Meta.Member(m.ID)
	return n.Meta.UpsertMember(ctx, meta.Member{ID: m.ID, RaftAddr: m.RaftAddr, RPCAddr: m.RPCAddr,
		HTTPAddr: m.HTTPAddr, LastHeartbeatMs: n.clock().Now().UnixMilli(), State: meta.MemberAlive, Draining: old.Draining,
		DiskID: m.DiskID})
}

// HandleJoin answers a joining node: the leader admits it (AddVoter is
// idempotent) and records it; a follower names the leader. An error means
// "not now, ask again".
func (n *Node) HandleJoin(ctx context.Context, m meta.Member) (JoinResult, error) {
	if !n.Meta.IsLeader() {
		id, _ := n.Meta.Leader()
		return JoinResult{Admitted: false, LeaderID: id, LeaderRPCAddr: Directory{Meta: n.Meta}.LeaderRPC()}, nil
	}
	// A known node rejoining from a wiped disk (its Raft state went with
	// it) has its copies forgotten first.
	if err := n.admitDisk(ctx, m); err != nil {
		return JoinResult{}, err
	}
	if err := n.Meta.AddVoter(ctx, m.ID, m.RaftAddr); err != nil {
		return JoinResult{}, fmt.Errorf("admitting %s: %w", m.ID, err)
	}
	if err := n.record(ctx, m); err != nil {
		return JoinResult{}, fmt.Errorf("recording %s: %w", m.ID, err)
	}
	return JoinResult{Admitted: true, LeaderID: n.Self.ID, LeaderRPCAddr: n.Self.RPCAddr}, nil
}

// HandleHeartbeat records a member's heartbeat on the leader; elsewhere
// it is ErrNotLeader. A heartbeat from a new disk counts (and is
// answered) only once the disk is recorded (admitDisk). It is answered
// only once a quorum confirmed that this node still leads
// (ConfirmLeader: no log write, no wait for the apply backlog): a deposed leader that has not noticed yet renews no
// lease, so once another leader is elected no heartbeat sent after the
// election is answered (but for messages then in flight), which is the
// bound FailoverAfter's margin over FenceAfter rests on. reports are the
// leaders m's followers have not reached (unreachable.go); they replace
// what m reported before.
func (n *Node) HandleHeartbeat(ctx context.Context, m meta.Member, reports ...LeaderReport) error {
	if !n.Meta.IsLeader() {
		return ErrNotLeader
	}
	at := n.clock().Now()
	if err := n.admitDisk(ctx, m); err != nil {
		return err
	}
	if err := n.Meta.ConfirmLeader(ctx); err != nil {
		return err
	}
	n.noteSeen(m.ID, at, n.Meta.Term())
	n.noteReports(m.ID, at, n.Meta.Term(), reports)
	return n.recordDue(ctx, m)
}

// tick is one controller turn (every FailoverEvery): only the leader
// controls. It notes when it became leader — within a turn of the Raft
// election, never before it, which is what FailoverAfter's margin
// assumes — looks for silent partition leaders at every turn, and runs
// the rest of control at most every ControlEvery.
func (n *Node) tick(ctx context.Context) {
	if !n.Meta.IsLeader() {
		n.leaderSince, n.controlled = time.Time{}, time.Time{}
		n.mu.Lock()
		n.lastSeen = nil // a later term starts from what it hears then
		n.lastDisk = nil
		n.reports = nil
		n.mu.Unlock()
		return
	}
	now := n.clock().Now()
	if term := n.Meta.Term(); n.leaderSince.IsZero() || term != n.leaderTerm {
		// Leading anew — also when leadership was lost and regained
		// between two turns: what was heard in an earlier term may be
		// older than a lease another leader granted meanwhile.
		n.mu.Lock()
		n.leaderSince, n.leaderTerm, n.controlled = now, term, time.Time{}
		n.mu.Unlock()
	}
	n.failover(ctx, now)
	if !n.controlled.IsZero() && now.Sub(n.controlled) < ControlEvery {
		return
	}
	n.controlled = now
	n.control(ctx)
}

// control is one controller tick on the leader: mark silent members dead,
// place partitions whose placement was deferred, elect leaders for silent
// ones, move and balance replicated copies (copies.go), plan moves of
// single copies, retire decommissioned members.
func (n *Node) control(ctx context.Context) {
	now := n.clock().Now()
	// A new leader's view of heartbeats is as old as its election: give
	// every member one full dead-after period to reach it first.
	markDead := now.Sub(n.leaderSince) >= DeadAfter
	for _, m := range n.Meta.Members() {
		if !markDead {
			break
		}
		silent := now.UnixMilli() - m.LastHeartbeatMs
		if m.State != meta.MemberDead && m.ID != n.Self.ID && silent > DeadAfter.Milliseconds() {
			m.State = meta.MemberDead
			if err := n.Meta.UpsertMember(ctx, m); err == nil {
				n.Log.Warn("member marked dead: no heartbeat", "member", m.ID, "silent_ms", silent)
			}
		}
	}
	live := Live(n.Meta.Members())
	for _, t := range n.Meta.Topics() {
		as := n.Meta.Assignments(t.Name)
		var fix []meta.Assignment
		for p, a := range as {
			if a.Owner != "" {
				continue
			}
			var parent []meta.Assignment
			if t.Parent != "" {
				parent = n.Meta.Assignments(t.Parent)
			}
			if placed := Assign(t.Name, p, p+1, t.ReplicationFactor, live, parent); placed[0].Owner != "" {
				fix = append(fix, placed[0])
			}
		}
		if len(fix) > 0 {
			n.Meta.SetAssignments(ctx, fix)
		}
	}
	// Copies and moves are planned on the leader's applied state made
	// current (a barrier): a new leader may not have applied every
	// committed change yet, and the in-flight bounds count what it sees.
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := n.Meta.Barrier(bctx)
	cancel()
	if err == nil {
		n.copies(now).tick(ctx)
		n.planMoves(ctx)
		n.noteBlocked()
	}
	n.retire(ctx)
}
