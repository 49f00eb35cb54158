package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/clustertls"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/httpapi"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/move"
	"github.com/narad-io/narad/internal/rpc"
	"github.com/narad-io/narad/internal/storage"
)

// rpcAddrOf is a cluster address with its port plus one: node RPC listens
// beside Raft (06-cluster.md), so peers never need to be told it.
func rpcAddrOf(raftAddr string) (string, error) {
	host, port, err := net.SplitHostPort(raftAddr)
	if err != nil {
		return "", err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(host, strconv.Itoa(p+1)), nil
}

// httpAdvertise is the client API address recorded in this node's member
// record: the bind address when it names a host, else the advertised
// cluster host with the HTTP port (":7942" or "0.0.0.0:7942" is not an
// address anyone can dial).
func httpAdvertise(httpAddr, raftAdvertise string) string {
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return httpAddr
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return httpAddr
	}
	rhost, _, err := net.SplitHostPort(raftAdvertise)
	if err != nil || rhost == "" {
		return httpAddr
	}
	return net.JoinHostPort(rhost, port)
}

// nodeHandler serves node RPC from this node's rooms; the move copy
// calls (MoveFreeze, MoveFiles, MoveRead) are the move Source's.
type nodeHandler struct {
	*move.Source
	b    *broker.Broker
	fan  *fanout.Engine
	ms   *meta.Store
	node *cluster.Node
	api  http.Handler
}

// Commit commits a batch another node routed here. That node saw the topic
// and this partition's owner at metaVersion; this replica may trail the
// leader by a few milliseconds (a topic created a moment ago), so it first
// catches up to that version — briefly — rather than answer 404 or "not
// the owner" and send the batch into the sender's retry backoff.
func (h *nodeHandler) Commit(ctx context.Context, topic string, incarnation uint64, p int, recs []storage.Record, metaVersion uint64) error {
	if metaVersion > 0 {
		waitMetaVersion(ctx, h.ms, metaVersion-1, catchUpForCommit)
	}
	return h.b.CommitIncarnation(ctx, topic, incarnation, p, recs)
}

// catchUpForCommit bounds that wait: past it the replica is behind for a
// reason (partitioned from the leader) and the commit answers from what it
// knows.
const catchUpForCommit = 2 * time.Second

// Forward serves a request another node routed here through the same HTTP
// handlers a local client reaches, marked forwarded (authenticated there,
// never forwarded again), so it answers exactly like a local request.
func (h *nodeHandler) Forward(ctx context.Context, req rpc.ForwardRequest) (rpc.ForwardResponse, error) {
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

func (h *nodeHandler) Stats(ctx context.Context, topic string, parts []int, exact bool) ([]rpc.PartitionStats, error) {
	if err := broker.ValidateTopicName(topic); err != nil {
		return nil, err
	}
	// The caller saw the topic and its placement, perhaps a moment ago
	// (create-as-child asks for attach points at once): if this replica
	// has not, it catches up with the leader first, briefly.
	if !h.knows(topic, parts) {
		cctx, cancel := context.WithTimeout(ctx, catchUpBound)
		_ = h.ms.CatchUp(cctx) // an error: answer from what the replica knows
		cancel()
	}
	reps := h.b.LocalReports(topic, parts, exact)
	out := make([]rpc.PartitionStats, len(reps))
	for i, r := range reps {
		out[i] = rpc.PartitionStats{Partition: r.Partition, Available: r.Available, Segments: r.Stats.Segments,
			OldestOffset: r.Stats.OldestOffset, HighWatermark: r.Stats.HighWatermark, SizeBytes: r.Stats.SizeBytes,
			OldestSegmentAt: r.Stats.OldestSegmentAt, ConsumerFrontier: r.Frontier, Exact: r.Stats.Exact}
		if r.Available {
			for _, c := range h.fan.CursorPositions(topic, r.Partition) {
				out[i].Cursors = append(out[i].Cursors, rpc.CursorPosition{Child: c.Child, Epoch: c.Epoch, NextOffset: c.NextOffset,
					State: c.State, AckedAtMs: c.AckedAtMs})
			}
		}
	}
	return out, nil
}

// knows reports whether this replica has topic and an owner for each of
// parts.
func (h *nodeHandler) knows(topic string, parts []int) bool {
	t, ok := h.ms.Topic(topic)
	if !ok {
		return false
	}
	for _, p := range parts {
		if o, _ := h.ms.Owner(topic, p); p >= t.Partitions || o == "" {
			return false
		}
	}
	return true
}

func (h *nodeHandler) ConfirmTopic(ctx context.Context, name, epoch string) (bool, bool, uint64, error) {
	if !h.ms.IsLeader() {
		return false, false, 0, apierr.Unavailable(time.Second, "not the leader")
	}
	return h.ms.ConfirmTopicIncarnationAsLeader(ctx, name, epoch)
}

func (h *nodeHandler) Join(ctx context.Context, m rpc.Member) (rpc.JoinResult, error) {
	return h.node.HandleJoin(ctx, m)
}

func (h *nodeHandler) Heartbeat(ctx context.Context, m rpc.Member) error {
	return h.node.HandleHeartbeat(ctx, m)
}

func (h *nodeHandler) Wait(ctx context.Context, topic string, wait time.Duration) (bool, error) {
	return h.b.WaitTopic(ctx, topic, wait)
}

func (h *nodeHandler) ConfirmOwner(ctx context.Context, topic string, p int) (string, string, error) {
	if !h.ms.IsLeader() {
		return "", "", apierr.Unavailable(time.Second, "not the leader")
	}
	return h.ms.ConfirmOwnerAsLeader(ctx, topic, p)
}

// ReadIndex serves a follower's read-your-writes question (leader only).
func (h *nodeHandler) ReadIndex(ctx context.Context) (uint64, error) {
	if !h.ms.IsLeader() {
		return 0, apierr.Unavailable(time.Second, "not the leader")
	}
	v, err := h.ms.ReadIndexAsLeader(ctx)
	return v, h.b.MetaErr(err)
}

func (h *nodeHandler) Flip(ctx context.Context, topic string, p int, from, to string) error {
	if !h.ms.IsLeader() {
		return apierr.Unavailable(time.Second, "not the leader")
	}
	return h.b.MetaErr(h.ms.FlipOwner(ctx, topic, p, from, to))
}

// clusterView implements httpapi.Cluster and the remote side of the
// commit seam over node RPC.
type clusterView struct {
	self string
	ms   *meta.Store
	node *cluster.Node
	pool *rpc.Pool
	// stopMoves ends the move worker and waits for its sessions: before
	// the broker closes, so no copy lands in a closed data directory.
	stopMoves func()
}

func (c *clusterView) Self() string   { return c.self }
func (c *clusterView) IsLeader() bool { return c.ms.IsLeader() }

func (c *clusterView) Owner(topic string, p int) string {
	o, _ := c.ms.Owner(topic, p)
	return o
}

func (c *clusterView) addr(node string) (string, error) {
	if node == "" {
		if a := c.node.LeaderRPC(); a != "" {
			return a, nil
		}
		return "", apierr.Unavailable(time.Second, "no Raft leader known")
	}
	if a, ok := c.node.RPCAddrOf(node); ok {
		return a, nil
	}
	return "", apierr.Unavailable(time.Second, "node %q has no known address", node)
}

func (c *clusterView) Forward(ctx context.Context, node string, req httpapi.ForwardRequest) (httpapi.ForwardResponse, error) {
	addr, err := c.addr(node)
	if err != nil {
		return httpapi.ForwardResponse{}, err
	}
	res, err := c.pool.Forward(ctx, addr, rpc.ForwardRequest(req))
	return httpapi.ForwardResponse(res), err
}

// ConfirmOwner asks the leader who owns a partition (meta.Confirmer).
func (c *clusterView) ConfirmOwner(ctx context.Context, leaderID, _ string, topic string, p int) (string, string, error) {
	addr, ok := c.node.RPCAddrOf(leaderID)
	if !ok {
		return "", "", fmt.Errorf("leader %q has no known node-RPC address", leaderID)
	}
	return c.pool.ConfirmOwner(ctx, addr, topic, p)
}

// ReadIndex asks the leader for its read index (meta.Confirmer).
func (c *clusterView) ReadIndex(ctx context.Context, leaderID, _ string) (uint64, error) {
	addr, ok := c.node.RPCAddrOf(leaderID)
	if !ok {
		return 0, fmt.Errorf("leader %q has no known node-RPC address", leaderID)
	}
	return c.pool.ReadIndex(ctx, addr)
}

// catchUpBound bounds the read-your-writes wait before a "no such topic":
// past it the replica is behind for a reason (cut off from the leader) and
// the request is answered from what it knows.
const catchUpBound = 2 * time.Second

// CatchUpTopic gives a request read-your-writes across nodes: if this
// replica does not know topic — created a moment ago through another
// node, perhaps — it first catches up with everything the leader had
// acknowledged (meta.Store.CatchUp), briefly. A topic that truly does not
// exist costs one question to the leader, then the 404.
func (c *clusterView) CatchUpTopic(ctx context.Context, topic string) {
	if _, ok := c.ms.Topic(topic); ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, catchUpBound)
	defer cancel()
	_ = c.ms.CatchUp(ctx) // an error: answer from what the replica knows, as before
}

// Wait parks on node until topic may have records there (node RPC Wait).
func (c *clusterView) Wait(ctx context.Context, node, topic string, wait time.Duration) (bool, error) {
	addr, err := c.addr(node)
	if err != nil {
		return false, err
	}
	return c.pool.Wait(ctx, addr, topic, wait)
}

// Commit is the remote committer of the route seam.
func (c *clusterView) Commit(ctx context.Context, topic string, incarnation uint64, p int, recs []storage.Record) error {
	owner := c.Owner(topic, p)
	addr, err := c.addr(owner)
	if err != nil {
		return err
	}
	return c.pool.Commit(ctx, addr, topic, incarnation, p, recs, c.ms.LatestDomainVersion())
}

// Stats is the broker's remote stats call.
func (c *clusterView) Stats(ctx context.Context, owner, topic string, parts []int, exact bool) ([]broker.PartitionReport, error) {
	addr, err := c.addr(owner)
	if err != nil {
		return nil, err
	}
	res, err := c.pool.Stats(ctx, addr, topic, parts, exact)
	if err != nil {
		return nil, err
	}
	out := make([]broker.PartitionReport, len(res))
	for i, r := range res {
		out[i] = broker.PartitionReport{Partition: r.Partition, Available: r.Available, Frontier: r.ConsumerFrontier,
			Stats: storage.Stats{Segments: r.Segments, OldestOffset: r.OldestOffset, HighWatermark: r.HighWatermark,
				SizeBytes: r.SizeBytes, OldestSegmentAt: r.OldestSegmentAt, Exact: r.Exact}}
		for _, cp := range r.Cursors {
			out[i].Cursors = append(out[i].Cursors, broker.CursorPosition{Child: cp.Child, Epoch: cp.Epoch, NextOffset: cp.NextOffset,
				State: cp.State, AckedAtMs: cp.AckedAtMs})
		}
	}
	return out, nil
}

// ConfirmTopic is meta's Confirmer: ask the leader over node RPC.
func (c *clusterView) ConfirmTopic(ctx context.Context, leaderID, _ string, name, epoch string) (bool, bool, error) {
	addr, ok := c.node.RPCAddrOf(leaderID)
	if !ok {
		return false, false, fmt.Errorf("leader %q has no known node-RPC address", leaderID)
	}
	return c.pool.ConfirmTopic(ctx, addr, name, epoch)
}

// TopicIncarnation is meta's Confirmer for incarnations: ask the leader
// over node RPC.
func (c *clusterView) TopicIncarnation(ctx context.Context, leaderID, _ string, name string) (bool, uint64, error) {
	addr, ok := c.node.RPCAddrOf(leaderID)
	if !ok {
		return false, 0, fmt.Errorf("leader %q has no known node-RPC address", leaderID)
	}
	return c.pool.TopicIncarnation(ctx, addr, name)
}

// placer is the controller's placement for the broker.
func (c *clusterView) placer(topic string, from, to int, parent string) []meta.Assignment {
	var parentAs []meta.Assignment
	if parent != "" {
		parentAs = c.ms.Assignments(parent)
	}
	return cluster.Assign(topic, from, to, cluster.Live(c.ms.Members()), parentAs)
}

// initialServers maps cluster.initial_members to Raft addresses: the
// node's own advertised address, the others' from cluster.peers.
func initialServers(cfg config.Config, self string) []meta.Server {
	var out []meta.Server
	for _, id := range cfg.Cluster.InitialMembers {
		if id == cfg.NodeID {
			out = append(out, meta.Server{ID: id, Addr: self})
			continue
		}
		for _, p := range cfg.Cluster.Peers {
			if p.ID == id {
				out = append(out, meta.Server{ID: id, Addr: p.Addr})
			}
		}
	}
	return out
}

// startCluster wires membership, the controller's placement, remote stats,
// leader confirmation and remote commits.
func startCluster(ctx context.Context, cfg config.Config, raftAdvertise string, ms *meta.Store, b *broker.Broker,
	moves *move.Source, tlsCfg *clustertls.Config, log *slog.Logger) (*clusterView, error) {
	rpcAdvertise, err := rpcAddrOf(raftAdvertise)
	if err != nil {
		return nil, fmt.Errorf("cluster address %q: %w", raftAdvertise, err)
	}
	var peers []string
	for _, p := range cfg.Cluster.Peers {
		if p.ID == cfg.NodeID {
			continue
		}
		if a, err := rpcAddrOf(p.Addr); err == nil {
			peers = append(peers, a)
		}
	}
	pool := rpc.NewPool(cfg.Cluster.Secret)
	if tlsCfg != nil {
		pool = rpc.NewTLSPool(cfg.Cluster.Secret, tlsCfg.Client)
	}
	node := &cluster.Node{
		Self:  meta.Member{ID: cfg.NodeID, RaftAddr: raftAdvertise, RPCAddr: rpcAdvertise, HTTPAddr: httpAdvertise(cfg.HTTP.Addr, raftAdvertise)},
		Meta:  ms,
		Pool:  pool,
		Peers: peers,
		Log:   log.With("component", "cluster"),
	}
	cv := &clusterView{self: cfg.NodeID, ms: ms, node: node, pool: pool}
	ms.SetConfirmer(cv)
	b.SetPlacer(cv.placer)
	b.SetStatsFunc(cv.Stats)
	go node.Run(ctx)
	mover := move.NewWorker(moves, move.WorkerConfig{Remote: move.NewNodeRemote(ms, pool, node, rpc.MaxMoveRead),
		DataDir: cfg.DataDir, Clock: clock.Real, Log: log.With("component", "move"), InPlace: fanout.CopiedCursorFile,
		InFlight: b.Metrics().MovesInFlight, Completed: b.Metrics().MovesCompleted})
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); mover.Run(mctx) }()
	cv.stopMoves = func() { stop(); <-done }
	return cv, nil
}

// serveRPC listens for node RPC on the cluster port + 1.
func serveRPC(cfg config.Config, h rpc.Handler, tlsCfg *clustertls.Config, refused func(string), log *slog.Logger) (func(), error) {
	addr, err := rpcAddrOf(cfg.Cluster.Addr)
	if err != nil {
		return nil, fmt.Errorf("cluster address %q: %w", cfg.Cluster.Addr, err)
	}
	opts := []rpc.ServerOption{rpc.WithLogger(log.With("component", "rpc")), rpc.WithRefused(refused)}
	if tlsCfg != nil {
		opts = append(opts, rpc.WithTLS(tlsCfg.Server))
	}
	srv, err := rpc.NewServer(cfg.Cluster.Secret, h, opts...)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("node RPC listener: %w", err)
	}
	log.Info("serving node RPC", "addr", ln.Addr().String())
	go srv.Serve(ln)
	return srv.Stop, nil
}

// reroute names a live sibling partition for records whose owner is dead
// in membership, or failed three passes in a row: produce stays available
// while an owner is down; ordering is not promised (06-cluster.md).
func (c *clusterView) reroute(topic string, p int32, failedPasses int) (int32, bool) {
	owner := c.Owner(topic, int(p))
	dead := owner != "" && !c.node.Alive(owner)
	if !dead && failedPasses < 3 {
		return 0, false
	}
	t, ok := c.ms.Topic(topic)
	if !ok {
		return 0, false
	}
	for i := 1; i < t.Partitions; i++ {
		q := (int(p) + i) % t.Partitions
		o := c.Owner(topic, q)
		if o != "" && o != owner && (o == c.self || c.node.Alive(o)) {
			return int32(q), true
		}
	}
	return 0, false
}

// MetaVersion is the replica's newest domain version.
func (c *clusterView) MetaVersion() uint64 { return c.ms.LatestDomainVersion() }

// WaitMetaVersion waits until the replica applied a change past after, or
// within passes.
func (c *clusterView) WaitMetaVersion(ctx context.Context, after uint64, within time.Duration) {
	waitMetaVersion(ctx, c.ms, after, within)
}

// waitMetaVersion waits until ms applied a change past after (domain
// versions are Raft indexes, so comparable across nodes), or within passes.
func waitMetaVersion(ctx context.Context, ms *meta.Store, after uint64, within time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	ms.WaitVersion(ctx, after+1)
}
