package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/httpapi"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/move"
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/rpc"
	"github.com/narad-io/narad/internal/storage"
)

// rpcHandler serves node RPC (rpc.Handler) from this node's components.
// Each method calls the component whose rule it is; what is left here is
// the edge: node RPC's types, and typed errors turned into the HTTP
// vocabulary node RPC carries (docs/architecture.md, "Node RPC"). The move
// copy calls (MoveFreeze, MoveFiles, MoveRead) are package move's Source.
type rpcHandler struct {
	*move.Source
	b    *broker.Broker
	fan  *fanout.Engine
	ms   *meta.Store
	node *cluster.Node
	api  http.Handler
	nets *networkCheck // warns of a heartbeat from another cluster.network
}

func (h *rpcHandler) Commit(ctx context.Context, topic string, incarnation uint64, p int, recs []storage.Record, metaVersion uint64) error {
	return h.b.CommitRouted(ctx, topic, incarnation, p, recs, metaVersion)
}

// Forward serves a request another node routed here through the same HTTP
// handlers a local client reaches, marked forwarded (authenticated there,
// never forwarded again), so it answers exactly like a local request.
func (h *rpcHandler) Forward(ctx context.Context, req rpc.ForwardRequest) (rpc.ForwardResponse, error) {
	target := req.Path
	if req.RawQuery != "" {
		target += "?" + req.RawQuery
	}
	r := httptest.NewRequestWithContext(httpapi.Forwarded(ctx, req.User), req.Method, target, bytes.NewReader(req.Body))
	if req.ContentType != "" {
		r.Header.Set("Content-Type", req.ContentType)
	}
	w := httptest.NewRecorder()
	h.api.ServeHTTP(w, r)
	res := w.Result()
	body, _ := io.ReadAll(res.Body)
	out := rpc.ForwardResponse{Status: res.StatusCode, ContentType: res.Header.Get("Content-Type"), Body: body,
		MetaVersion: h.ms.LatestDomainVersion()}
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
		out.RetryAfter = time.Duration(ra) * time.Second
	}
	return out, nil
}

func (h *rpcHandler) Stats(ctx context.Context, topic string, parts []int, exact bool) ([]rpc.PartitionStats, error) {
	reps, err := h.b.OwnerReports(ctx, topic, parts, exact)
	if err != nil {
		return nil, err
	}
	return statsOf(reps, func(p int) []rpc.CursorPosition {
		var out []rpc.CursorPosition
		for _, c := range h.fan.CursorPositions(topic, p) {
			// A conversion, not a field list: the two types must stay the
			// same fields, or this stops compiling (no field is dropped
			// on the way to another node).
			out = append(out, rpc.CursorPosition(c))
		}
		return out
	}), nil
}

// notLeader is the answer of a leader-only call on a follower: the caller
// asks again shortly, by then of the new leader.
func notLeader() error { return apierr.Unavailable(time.Second, "not the leader") }

func (h *rpcHandler) ConfirmTopic(ctx context.Context, name, epoch string) (bool, bool, uint64, error) {
	if !h.ms.IsLeader() {
		return false, false, 0, notLeader()
	}
	return h.ms.ConfirmTopicIncarnationAsLeader(ctx, name, epoch)
}

func (h *rpcHandler) ConfirmOwner(ctx context.Context, topic string, p int) (string, string, error) {
	if !h.ms.IsLeader() {
		return "", "", notLeader()
	}
	return h.ms.ConfirmOwnerAsLeader(ctx, topic, p)
}

// ReadIndex serves a follower's read-your-writes question (leader only).
func (h *rpcHandler) ReadIndex(ctx context.Context) (uint64, error) {
	if !h.ms.IsLeader() {
		return 0, notLeader()
	}
	v, err := h.ms.ReadIndexAsLeader(ctx)
	return v, h.b.MetaErr(err)
}

func (h *rpcHandler) Flip(ctx context.Context, topic string, p int, from, to string) error {
	if !h.ms.IsLeader() {
		return notLeader()
	}
	return h.b.MetaErr(h.ms.FlipOwner(ctx, topic, p, from, to))
}

// Join admits a node (on the leader); any failure is "not now, ask again".
func (h *rpcHandler) Join(ctx context.Context, m rpc.Member) (rpc.JoinResult, error) {
	res, err := h.node.HandleJoin(ctx, metaMember(m))
	if err != nil {
		return rpc.JoinResult{}, apierr.Unavailable(time.Second, "%v", err)
	}
	return rpc.JoinResult{Admitted: res.Admitted, LeaderID: res.LeaderID, LeaderRPCAddr: res.LeaderRPCAddr}, nil
}

func (h *rpcHandler) Heartbeat(ctx context.Context, m rpc.Member, unreachable []rpc.UnreachableLeader) error {
	if h.nets != nil {
		h.nets.note(m, time.Now())
	}
	reports := make([]cluster.LeaderReport, len(unreachable))
	for i, u := range unreachable {
		reports[i] = cluster.LeaderReport(u)
	}
	err := h.node.HandleHeartbeat(ctx, metaMember(m), reports...)
	if errors.Is(err, cluster.ErrNotLeader) {
		return notLeader()
	}
	return err
}

func (h *rpcHandler) Wait(ctx context.Context, topic string, wait time.Duration) (bool, error) {
	return h.b.WaitTopic(ctx, topic, wait)
}

// Fetch serves a follower of a replicated partition this node leads. The
// conversions (not field lists) stop compiling if node RPC's types and
// package replica's drift apart.
func (h *rpcHandler) Fetch(ctx context.Context, req rpc.FetchRequest) (rpc.FetchResponse, error) {
	resp, err := h.b.Fetch(ctx, replica.FetchRequest(req))
	return rpc.FetchResponse(resp), err
}

// Propose applies a replication write another node forwarded (meta's
// Forwarder), on the metastore leader only.
func (h *rpcHandler) Propose(ctx context.Context, cmd []byte) error {
	if !h.ms.IsLeader() {
		return notLeader()
	}
	return h.b.MetaErr(h.ms.ApplyForwarded(ctx, cmd))
}
