package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/clustertls"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/console"
	"github.com/narad-io/narad/internal/dispatch"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/history"
	"github.com/narad-io/narad/internal/httpapi"
	"github.com/narad-io/narad/internal/journal"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/move"
	"github.com/narad-io/narad/internal/ratelimit"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/rpc"
	"github.com/narad-io/narad/internal/wal"
)

// Run runs a node until ctx is cancelled, then shuts it down gracefully.
// It is the boot order of docs/architecture.md, top to bottom. Each component
// is built from the ones before it and closed (deferred) after the ones after
// it; every long-lived goroutine runs in one run group, stopped and joined
// before any component closes.
func Run(ctx context.Context, cfg config.Config) error {
	start := time.Now()
	log := config.NewLogger(cfg)
	n, err := prepare(&cfg, log)
	if err != nil {
		return err
	}
	defer n.lock.Close()
	httpLn, err := listenHTTP(cfg.HTTP.Addr)
	if err != nil {
		return err
	}
	defer httpLn.Close()
	m := metrics.New()

	// 1. The metastore. In a cluster the node RPC pool comes first: the
	// metastore's leader confirmations travel on it.
	var pool *rpc.Pool
	if n.clustered {
		pool = newPool(cfg, n.clusterTLS)
		defer pool.Close()
	}
	mo := metaOptions(cfg, n, m, pool, log)
	ms, err := meta.Open(mo)
	if errors.Is(err, syscall.EADDRINUSE) {
		return addrErr("the cluster port (Raft)", mo.BindAddr, clusterAddrSetting, err)
	}
	if err != nil {
		return fmt.Errorf("metastore: %w", err)
	}
	defer ms.Close()
	m.ObserveRaft(ms)
	m.ObserveMembers(memberCounts(ms))
	m.ObserveReplication(replicationCounts(ms))
	others := peers{dir: cluster.Directory{Meta: ms}, pool: pool}

	// 2. Storage and the broker, the disk reserve first. The broker's
	// create gate is closed until the startup reconcile (step 6).
	disk := openDisk(cfg, m, log)
	w, err := wal.Open(filepath.Join(cfg.DataDir, "ingress"), wal.Options{Logger: log.With("component", "wal")})
	if err != nil {
		return fmt.Errorf("ingress log: %w", err)
	}
	defer w.Close()
	// The journal replays before any partition log opens (package journal).
	jnl, err := journal.Open(cfg.DataDir, journalOptions(cfg, m, log))
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer jnl.Close()
	m.ObserveIngressWAL(func() metrics.WALCounts {
		s := w.Stats()
		return metrics.WALCounts{Syncs: s.Syncs, Records: s.Records, Appends: s.Appends}
	})
	freezes := move.NewFreezes(clock.Real, nil) // the broker's commit-admission hook
	var lease nodeLease                         // replicated partitions serve only while this node holds it (step 4 sets it)
	bc := brokerConfig(cfg, n, disk, log)
	bc.Admission = freezes
	bc.Journal = jnl
	if n.clustered {
		bc.Placer, bc.RemoteStats = cluster.Placement{Meta: ms}.Place, remoteStats{peers: others}.Stats
		bc.LiveNodes = cluster.Placement{Meta: ms}.LiveCount
		bc.Remote = remoteCommitter{ms: ms, peers: others} // dead-letter copies to other owners: the router's remote side
		bc.Replication = newReplication(cfg.NodeID, n.disk.ID, ms, others, m, log.With("component", "replica"))
		bc.Fenced = lease.fenced
	}
	gate, cursors := &replayGate{}, &cursorFiles{} // bound below, once dispatch and fan-out exist (late.go)
	bc.ReplayGate, bc.CursorCopies = gate.Replaying, cursors
	b := broker.New(bc, ms, w, m)
	moves, err := move.NewSource(cfg.NodeID, ms, moveData{b.Partitions(), b}, freezes) // loads the freezes on disk: before any commit
	if err != nil {
		b.Close()
		return err
	}
	b.Start()
	defer b.Close()

	// Every goroutine from here on runs in g, which stops before the
	// components above close (deferred calls run last first).
	g := newGroup(log)
	defer g.Stop()
	g.Go("disk reserve", func(ctx context.Context) { disk.Run(ctx, time.Second) })

	// 3. Dispatch from the ingress WAL, and fan-out: both commit through
	// one seam, the router (locally, or to the owner by node RPC).
	router := &route.Router{Self: cfg.NodeID, Owner: ms.Owner, Local: b.Commit}
	d := &dispatch.Dispatcher{WAL: w, Commit: router, Metrics: m, Logger: log.With("component", "dispatch"),
		Discard:    dispatch.LeaderDiscarder(ms),
		Partitions: func(topic string) int { t, _ := ms.Topic(topic); return t.Partitions },
		Lazy:       cfg.Storage.LazyPartitionSync}
	gate.d.Store(d)
	if n.clustered {
		router.Remote = remoteCommitter{ms: ms, peers: others}
		d.Reroute = cluster.Rerouter{Self: cfg.NodeID, Meta: ms}.Reroute
	}
	g.Go("dispatch", d.Run)
	fan := fanout.New(fanoutConfig(cfg, log), cfg.NodeID, ms, b.Partitions(), b, b, router, m)
	cursors.e.Store(fan) // a replicated parent's cursor files follow its leader
	fan.Start()
	g.Go("fan-out", func(ctx context.Context) { <-ctx.Done(); fan.Close() })

	// 4. Membership (join, heartbeats, the controller) and the move worker.
	var node *cluster.Node
	if n.clustered {
		if node, err = newMembership(cfg, n, ms, pool, log); err != nil {
			return err
		}
		node.Heals = m.ReplicaHeals
		node.CutOffElections = m.ReplicaCutOffElections
		node.Unreachable = unreachableLeaders(b, time.Now)
		lease.set(node)
		g.Go("membership", node.Run)
		mover := move.NewWorker(moves, move.WorkerConfig{Remote: move.NewNodeRemote(ms, pool, others.dir, rpc.MaxMoveRead),
			DataDir: cfg.DataDir, Clock: clock.Real, Log: log.With("component", "move"), InPlace: fanout.CopiedCursorFile,
			InFlight: m.MovesInFlight, Completed: m.MovesCompleted})
		g.Go("move worker", mover.Run)
	}

	// The stats history the console charts (package history).
	book := history.NewBook()
	g.Go("stats history", func(ctx context.Context) {
		book.Run(ctx, clock.Real, historySource(ms, b), func(t string) bool { _, ok := ms.Topic(t); return ok })
	})

	// The client API, which answers /readyz from the start.
	ready := &readiness{ms: ms, node: node, w: w, disk: disk}
	sealer := AccessKeySealer(cfg) // one, shared by the users API and the SigV4 verifier
	opts := apiOptions(cfg, ms, b, node, others, sealer)
	opts.History = book
	api := httpapi.New(b, fan, m, authenticator(cfg, ms, m, ready), ready.check, log.With("component", "http"), opts)

	// 5. The node RPC listener.
	if n.clustered {
		h := &rpcHandler{Source: moves, b: b, fan: fan, ms: ms, node: node, api: api,
			nets: newNetworkCheck(cfg.Cluster.Network, log.With("component", "cluster"))}
		if err := serveRPC(g, cfg, h, n.clusterTLS, refusedCounter(m, rpc.Plane), log); err != nil {
			return err
		}
	}

	// 6. The startup reconcile; then the create gate opens and /readyz may
	// flip. Meanwhile the root admin is seeded (the first proposal wins).
	g.Go("startup reconcile", func(ctx context.Context) {
		reconcileAtStartup(ctx, ms, b, n.adopt)
		ready.startupDone.Store(true)
		m.BootDuration.Set(time.Since(start).Seconds())
		log.Info("node ready", "node_id", cfg.NodeID, "boot_seconds", time.Since(start).Seconds())
	})
	if cfg.Security.Enabled {
		g.Go("root admin", func(ctx context.Context) { seedRoot(ctx, ms, cfg.Security, os.Stderr, log) })
		g.Go("password warm-up", func(context.Context) { auth.WarmUp() })
	}
	if cfg.HTTP.PprofAddr != "" {
		servePprof(g, cfg.HTTP.PprofAddr, log)
	}

	// 7. Serve clients until ctx ends. The web console is served beside
	// the API on the same listener (package console); it talks to the API
	// like any client. Then, in this order: the client API drains first
	// (in-flight requests get http.shutdown_grace; nothing else has
	// stopped yet, so node RPC, dispatch and replication still serve
	// them); then, in a cluster, Raft leadership goes to another voter if this
	// node holds it, so the others do not wait out an election timeout
	// (also when the API's listener failed instead); then the deferred
	// calls: the run group stops, every goroutine joined, and the
	// components close, last built first (broker and its partition logs,
	// ingress WAL, metastore, node RPC pool, HTTP listener, the data
	// directory's lock).
	err = serveHTTP(ctx, cfg, httpLn, awsEdge(cfg, api, console.Handler(api), awsVerifier(cfg, ms, sealer), m, log.With("component", "aws")), n.httpTLS, log)
	if n.clustered {
		ms.TransferLeadership()
	}
	return err
}

// authenticator checks client credentials (nil with security off). Failed
// logins count toward the per-source slowdown only once the node is
// ready.
func authenticator(cfg config.Config, ms *meta.Store, m *metrics.Metrics, ready *readiness) httpapi.Authenticator {
	if !cfg.Security.Enabled {
		return nil
	}
	a := auth.NewAuthenticator(ms, m.AuthFailures.Inc)
	a.CountFailuresOnceReady(ready.ok)
	return a
}

// apiOptions are the client API's optional parts: users, the /v1/cluster
// routes, per-user rate limits (buckets on the system clock, the
// configured defaults), and in a cluster routing to the leader and
// partition owners.
func apiOptions(cfg config.Config, ms *meta.Store, b *broker.Broker, node *cluster.Node, others peers, sealer *auth.Sealer) httpapi.Options {
	defaults := meta.Rates{ProduceRecordsPerS: cfg.Limits.ProduceRecordsPerS,
		ProduceBytesPerS: cfg.Limits.ProduceBytesPerS, ConsumeRequestsPerS: cfg.Limits.ConsumeRequestsPerS}
	users := auth.NewManager(ms, b.MetaErr, defaults).SealAccessKeys(sealer)
	o := httpapi.Options{DataDir: cfg.DataDir, Users: users, UserStore: ms,
		ClusterAdmin: &clusterOps{self: cfg.NodeID, ms: ms, mapE: b.MetaErr},
		Limiter:      ratelimit.New(clock.Real), DefaultLimits: defaults}
	if node != nil {
		o.Cluster = httpCluster{self: cfg.NodeID, ms: ms, peers: others}
	}
	return o
}

// AccessKeySealer seals and unseals the secrets of users' access keys
// (docs/security.md, "Access keys and AWS signatures"): with a key derived
// from the cluster secret, which every node of a cluster shares, or on a
// node without one with a random key kept beside the metastore,
// <data>/metastore/access-keys.key, created on first need. The SigV4
// verifier's auth.KeyRing unseals with one built the same way.
func AccessKeySealer(cfg config.Config) *auth.Sealer {
	return auth.NewSealer([]byte(cfg.Cluster.Secret), filepath.Join(cfg.DataDir, "metastore", "access-keys.key"))
}

// serveRPC listens for node RPC on the cluster port + 1, in g.
func serveRPC(g *group, cfg config.Config, h rpc.Handler, tlsCfg *clustertls.Config, refused func(string), log *slog.Logger) error {
	addr, err := rpcAddrOf(cfg.Cluster.Addr)
	if err != nil {
		return fmt.Errorf("cluster address %q: %w", cfg.Cluster.Addr, err)
	}
	srv, err := newRPCServer(cfg, h, tlsCfg, refused, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return addrErr("node RPC (the cluster port + 1)", addr, clusterAddrSetting, err)
	}
	log.Info("serving node RPC", "addr", ln.Addr().String())
	g.Serve("node RPC", func() error { return srv.Serve(ln) }, srv.Stop)
	return nil
}

// newRPCServer is the node RPC server: on mutual TLS when configured,
// serving framed connections beside gRPC only when cluster.framed_rpc is
// set (else exactly as a release before them).
func newRPCServer(cfg config.Config, h rpc.Handler, tlsCfg *clustertls.Config, refused func(string), log *slog.Logger) (*rpc.Server, error) {
	opts := []rpc.ServerOption{rpc.WithLogger(log.With("component", "rpc")), rpc.WithRefused(refused)}
	if !cfg.Cluster.FramedRPC {
		opts = append(opts, rpc.WithoutFramed())
	}
	if tlsCfg != nil {
		opts = append(opts, rpc.WithTLS(tlsCfg.Server))
	}
	return rpc.NewServer(cfg.Cluster.Secret, h, opts...)
}

// serveHTTP serves on ln (bound by listenHTTP) until ctx ends, then
// drains within the grace period.
func serveHTTP(ctx context.Context, cfg config.Config, ln net.Listener, h http.Handler, tlsCfg *tls.Config, log *slog.Logger) error {
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	srv := httpServer(cfg.HTTP, h, tlsCfg)
	log.Info("serving the client API", "addr", ln.Addr().String(), "https", tlsCfg != nil, "h2c", srv.Protocols != nil)
	warnBasicAuthInClear(cfg.Security.Enabled, tlsCfg != nil, ln.Addr().String(), log)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining HTTP", "grace", cfg.HTTP.ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.HTTP.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("HTTP drain cut short", "err", err)
		srv.Close()
	}
	<-errc // Serve has returned
	return nil
}

// httpServer is the client API's server: its timeouts, and HTTP/2 without
// TLS beside HTTP/1.1 when http.h2c is on and there is no TLS (net/http
// tells them apart by the HTTP/2 connection preface, so an HTTP/1.1 client
// sees no difference). The timeouts hold for HTTP/2 streams too: a read
// timeout ends a stream whose body stalls, a write timeout one whose
// answer cannot be written.
func httpServer(cfg config.HTTPConfig, h http.Handler, tlsCfg *tls.Config) *http.Server {
	srv := &http.Server{Handler: h, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout,
		IdleTimeout: cfg.IdleTimeout, ReadHeaderTimeout: cfg.ReadTimeout, TLSConfig: tlsCfg}
	if cfg.H2C && tlsCfg == nil {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv.Protocols = &p
	}
	return srv
}

// servePprof serves the profiling endpoints in g. A listener that cannot
// start is logged; the node runs without it.
func servePprof(g *group, addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	log.Warn("pprof listener is unauthenticated", "addr", addr)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Error("pprof listener", "err", err)
		return
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	g.Serve("pprof", func() error { return srv.Serve(ln) }, func() { srv.Close() })
}

// seedRoot creates the root admin at the cluster's first start (whichever
// node leads proposes it; the first proposal wins). A generated password
// is shown by the node whose proposal took effect, so exactly once in the
// cluster's life; later starts and other nodes never show one. It goes to
// out on a line of its own, never into a log record: logs are shipped,
// indexed and kept, and a JSON record would hide it among the others.
func seedRoot(ctx context.Context, ms *meta.Store, sec config.SecurityConfig, out io.Writer, log *slog.Logger) {
	seeded, err := auth.SeedRoot(ctx, ms, sec.AdminPassword, func(err error) {
		log.Warn("seeding the root admin failed; retrying", "err", err)
	})
	switch {
	case err != nil:
		if ctx.Err() == nil {
			log.Error("seeding the root admin", "err", err)
		}
	case seeded && sec.AdminPasswordGenerated:
		log.Info("created the root admin with a generated password, printed once on standard error (not logged); set NARAD_ADMIN_PASSWORD before a cluster's first start to choose it",
			"user", auth.AdminUser)
		fmt.Fprintf(out, "%s %s\n", GeneratedPasswordBanner, sec.AdminPassword)
	case seeded:
		log.Info("created the root admin from NARAD_ADMIN_PASSWORD", "user", auth.AdminUser)
	}
}

// GeneratedPasswordBanner starts the one line that shows a generated root
// admin password; the password ends it (awk '{print $NF}' takes it).
const GeneratedPasswordBanner = "*** narad: GENERATED PASSWORD of the root admin \"" + auth.AdminUser + "\" (shown once; not logged):"
