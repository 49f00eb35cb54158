package cluster

import (
	"context"
	"log/slog"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/rpc"
)

// Timing of 06-cluster.md.
const (
	JoinEvery      = 2 * time.Second
	HeartbeatEvery = 5 * time.Second
	DeadAfter      = 30 * time.Second
)

// Node is this node's membership: it joins, heartbeats, and on the leader
// runs the controller.
type Node struct {
	Self  meta.Member
	Meta  *meta.Store
	Pool  *rpc.Pool
	Peers []string // RPC addresses of the configured peers, for joining
	Log   *slog.Logger
	Now   func() time.Time
	// HeartbeatEvery and DeadAfter may be shortened by tests.
	HeartbeatEvery, DeadAfter time.Duration

	leaderSince time.Time // when this node last became leader (controller only)
}

// Run joins (if needed), then heartbeats and, while leading, controls,
// until ctx ends.
func (n *Node) Run(ctx context.Context) {
	if n.Now == nil {
		n.Now = time.Now
	}
	if n.HeartbeatEvery == 0 {
		n.HeartbeatEvery = HeartbeatEvery
	}
	if n.DeadAfter == 0 {
		n.DeadAfter = DeadAfter
	}
	n.join(ctx)
	// Until the leader has recorded this node, try often: placement and
	// routing need every member's record.
	for ctx.Err() == nil {
		n.heartbeat(ctx)
		if _, ok := n.Meta.Member(n.Self.ID); ok {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	hb := time.NewTicker(n.HeartbeatEvery)
	ctl := time.NewTicker(time.Second)
	defer hb.Stop()
	defer ctl.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hb.C:
			n.heartbeat(ctx)
		case <-ctl.C:
			if !n.Meta.IsLeader() {
				n.leaderSince = time.Time{}
				continue
			}
			if n.leaderSince.IsZero() {
				n.leaderSince = n.Now()
			}
			n.control(ctx)
		}
	}
}

// join walks the peers every 2 s until this node's own Raft sees a leader
// and lists it as a voter: admission is proved locally, not taken on a
// peer's word.
func (n *Node) join(ctx context.Context) {
	for !n.Meta.Admitted() {
		for _, addr := range n.Peers {
			if n.Meta.Admitted() || ctx.Err() != nil {
				break
			}
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			res, err := n.Pool.Join(cctx, addr, n.rpcMember())
			if err == nil && !res.Admitted && res.LeaderRPCAddr != "" {
				res, err = n.Pool.Join(cctx, res.LeaderRPCAddr, n.rpcMember())
			}
			cancel()
			if err != nil {
				n.Log.Debug("join attempt failed", "peer", addr, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(JoinEvery):
		}
	}
}

func (n *Node) rpcMember() rpc.Member {
	return rpc.Member{ID: n.Self.ID, RaftAddr: n.Self.RaftAddr, RPCAddr: n.Self.RPCAddr, HTTPAddr: n.Self.HTTPAddr}
}

// heartbeat tells the leader this node lives (the leader records it).
func (n *Node) heartbeat(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if n.Meta.IsLeader() {
		n.record(cctx, n.rpcMember())
		return
	}
	addr := n.LeaderRPC()
	if addr == "" {
		return
	}
	if err := n.Pool.Heartbeat(cctx, addr, n.rpcMember()); err != nil {
		n.Log.Debug("heartbeat failed", "leader", addr, "err", err)
	}
}

// Recorded reports whether this node's member record is in the replica.
func (n *Node) Recorded() bool {
	_, ok := n.Meta.Member(n.Self.ID)
	return ok
}

// LeaderRPC is the leader's node-RPC address from its member record.
func (n *Node) LeaderRPC() string {
	id, _ := n.Meta.Leader()
	if id == "" {
		return ""
	}
	if m, ok := n.Meta.Member(id); ok {
		return m.RPCAddr
	}
	return ""
}

// RPCAddrOf is a member's node-RPC address.
func (n *Node) RPCAddrOf(id string) (string, bool) {
	m, ok := n.Meta.Member(id)
	if !ok || m.RPCAddr == "" {
		return "", false
	}
	return m.RPCAddr, true
}

// Alive reports whether a member is alive in this replica's view.
func (n *Node) Alive(id string) bool {
	m, ok := n.Meta.Member(id)
	return ok && m.State != meta.MemberDead
}

// record upserts a member as alive with a fresh heartbeat (leader only),
// keeping its drain flag: a decommission survives the node's restarts.
func (n *Node) record(ctx context.Context, m rpc.Member) error {
	old, _ := n.Meta.Member(m.ID)
	return n.Meta.UpsertMember(ctx, meta.Member{ID: m.ID, RaftAddr: m.RaftAddr, RPCAddr: m.RPCAddr,
		HTTPAddr: m.HTTPAddr, LastHeartbeatMs: n.Now().UnixMilli(), State: meta.MemberAlive, Draining: old.Draining})
}

// HandleJoin answers a joining node: the leader admits it (AddVoter is
// idempotent) and records it; a follower names the leader.
func (n *Node) HandleJoin(ctx context.Context, m rpc.Member) (rpc.JoinResult, error) {
	if !n.Meta.IsLeader() {
		id, _ := n.Meta.Leader()
		return rpc.JoinResult{Admitted: false, LeaderID: id, LeaderRPCAddr: n.LeaderRPC()}, nil
	}
	if err := n.Meta.AddVoter(ctx, m.ID, m.RaftAddr); err != nil {
		return rpc.JoinResult{}, apierr.Unavailable(time.Second, "admitting %s: %v", m.ID, err)
	}
	if err := n.record(ctx, m); err != nil {
		return rpc.JoinResult{}, apierr.Unavailable(time.Second, "recording %s: %v", m.ID, err)
	}
	return rpc.JoinResult{Admitted: true, LeaderID: n.Self.ID, LeaderRPCAddr: n.Self.RPCAddr}, nil
}

// HandleHeartbeat records a member's heartbeat on the leader.
func (n *Node) HandleHeartbeat(ctx context.Context, m rpc.Member) error {
	if !n.Meta.IsLeader() {
		return apierr.Unavailable(time.Second, "not the leader")
	}
	return n.record(ctx, m)
}

// control is one controller tick on the leader: mark silent members dead,
// and place partitions whose placement was deferred.
func (n *Node) control(ctx context.Context) {
	now := n.Now().UnixMilli()
	// A new leader's view of heartbeats is as old as its election: give
	// every member one full dead-after period to reach it first.
	markDead := n.Now().Sub(n.leaderSince) >= n.DeadAfter
	for _, m := range n.Meta.Members() {
		if !markDead {
			break
		}
		if m.State != meta.MemberDead && m.ID != n.Self.ID && now-m.LastHeartbeatMs > n.DeadAfter.Milliseconds() {
			m.State = meta.MemberDead
			if err := n.Meta.UpsertMember(ctx, m); err == nil {
				n.Log.Warn("member marked dead: no heartbeat", "member", m.ID, "silent_ms", now-m.LastHeartbeatMs)
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
