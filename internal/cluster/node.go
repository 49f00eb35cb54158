package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
)

// Timing of 06-cluster.md.
const (
	JoinEvery      = 2 * time.Second
	HeartbeatEvery = 5 * time.Second
	DeadAfter      = 30 * time.Second
	// ControlEvery is the controller's tick on the leader.
	ControlEvery = time.Second
	// recordRetry is how often a new node heartbeats until the leader has
	// recorded it: placement and routing need every member's record.
	recordRetry = 200 * time.Millisecond
	// callTimeout bounds one join or heartbeat call.
	callTimeout = 5 * time.Second
)

// Node is this node's membership: it joins, heartbeats, and on the leader
// runs the controller. Every rule of time here reads Clock.
type Node struct {
	Self      meta.Member // this node's addresses
	Meta      *meta.Store
	Transport Transport
	Peers     []string // RPC addresses of the configured peers, for joining
	Log       *slog.Logger
	Clock     clock.Clock // nil: the system clock

	leaderSince time.Time // when this node last became leader (controller only)
}

func (n *Node) clock() clock.Clock { return clock.Or(n.Clock) }

// Run joins (if needed), then heartbeats every HeartbeatEvery and, while
// leading, runs the controller every ControlEvery, until ctx ends.
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
	// One timer at a time, to whichever duty is due next; a duty that
	// fell behind skips its missed turns (as a ticker drops ticks).
	now := clk.Now()
	nextBeat, nextControl := now.Add(HeartbeatEvery), now.Add(ControlEvery)
	for {
		next := nextBeat
		if nextControl.Before(next) {
			next = nextControl
		}
		if clock.Sleep(ctx, clk, next.Sub(clk.Now())) != nil {
			return
		}
		now := clk.Now()
		if !now.Before(nextBeat) {
			n.heartbeat(ctx)
			nextBeat = following(nextBeat, HeartbeatEvery, now)
		}
		if !now.Before(nextControl) {
			n.tick(ctx)
			nextControl = following(nextControl, ControlEvery, now)
		}
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

// heartbeat tells the leader this node lives (the leader records it).
func (n *Node) heartbeat(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if n.Meta.IsLeader() {
		n.record(cctx, n.Self)
		return
	}
	addr := Directory{Meta: n.Meta}.LeaderRPC()
	if addr == "" {
		return
	}
	if err := n.Transport.Heartbeat(cctx, addr, n.Self); err != nil {
		n.Log.Debug("heartbeat failed", "leader", addr, "err", err)
	}
}

// Recorded reports whether this node's member record is in the replica.
func (n *Node) Recorded() bool {
	_, ok := n.Meta.Member(n.Self.ID)
	return ok
}

// record upserts a member as alive with a fresh heartbeat (leader only),
// keeping its drain flag: a decommission survives the node's restarts.
func (n *Node) record(ctx context.Context, m meta.Member) error {
	old, _ := n.Meta.Member(m.ID)
	return n.Meta.UpsertMember(ctx, meta.Member{ID: m.ID, RaftAddr: m.RaftAddr, RPCAddr: m.RPCAddr,
		HTTPAddr: m.HTTPAddr, LastHeartbeatMs: n.clock().Now().UnixMilli(), State: meta.MemberAlive, Draining: old.Draining})
}

// HandleJoin answers a joining node: the leader admits it (AddVoter is
// idempotent) and records it; a follower names the leader. An error means
// "not now, ask again".
func (n *Node) HandleJoin(ctx context.Context, m meta.Member) (JoinResult, error) {
	if !n.Meta.IsLeader() {
		id, _ := n.Meta.Leader()
		return JoinResult{Admitted: false, LeaderID: id, LeaderRPCAddr: Directory{Meta: n.Meta}.LeaderRPC()}, nil
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
// it is ErrNotLeader.
func (n *Node) HandleHeartbeat(ctx context.Context, m meta.Member) error {
	if !n.Meta.IsLeader() {
		return ErrNotLeader
	}
	return n.record(ctx, m)
}

// tick is one controller turn: only the leader controls, and it notes
// when it became leader (see control).
func (n *Node) tick(ctx context.Context) {
	if !n.Meta.IsLeader() {
		n.leaderSince = time.Time{}
		return
	}
	if n.leaderSince.IsZero() {
		n.leaderSince = n.clock().Now()
	}
	n.control(ctx)
}

// control is one controller tick on the leader: mark silent members dead,
// and place partitions whose placement was deferred.
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
			if placed := Assign(t.Name, p, p+1, live, parent); placed[0].Owner != "" {
				fix = append(fix, placed[0])
			}
		}
		if len(fix) > 0 {
			n.Meta.SetAssignments(ctx, fix)
		}
	}
	n.planMoves(ctx)
	n.retire(ctx)
}
