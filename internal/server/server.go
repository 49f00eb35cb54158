package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/clustertls"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/datadir"
	"github.com/narad-io/narad/internal/dispatch"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/httpapi"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/reserve"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/rpc"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// Run runs a node until ctx is cancelled, then shuts it down gracefully.
func Run(ctx context.Context, cfg config.Config) error {
	start := time.Now()
	log := config.NewLogger(cfg)
	if cfg.Dev {
		log.Warn("developer mode: loopback only, authentication off", "data_dir", cfg.DataDir)
	}
	clustered := len(cfg.Cluster.Peers) > 0
	if clustered && cfg.Cluster.Secret == "" {
		return errors.New("cluster peers are configured but NARAD_CLUSTER_SECRET is not: node RPC refuses to run without it")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	adopt, err := checkDataDir(&cfg, log)
	if err != nil {
		return err
	}
	raftAdvertise := advertise(cfg.NodeID, cfg.Cluster)
	if raftAdvertise == "" {
		raftAdvertise = cfg.Cluster.Addr
	}
	codec, err := storage.ParseCodec(cfg.Storage.Codec)
	if err != nil {
		return err
	}
	m := metrics.New()

	tlsCfg, err := clusterTLS(cfg, clustered, log)
	if err != nil {
		return err
	}
	httpTLS, err := clientTLS(cfg.HTTP)
	if err != nil {
		return err
	}
	// 1. The metastore: a node with no peers bootstraps a one-member Raft.
	ms, err := meta.Open(meta.Options{
		TLS:            tlsCfg,
		Secret:         []byte(cfg.Cluster.Secret),
		StreamRefused:  refusedCounter(m, "raft"),
		Dir:            filepath.Join(cfg.DataDir, "metastore"),
		NodeID:         cfg.NodeID,
		BindAddr:       raftBind(cfg.Cluster, clustered, log),
		Advertise:      advertise(cfg.NodeID, cfg.Cluster),
		Bootstrap:      !clustered,
		InitialServers: initialServers(cfg, raftAdvertise),
		Logger:         log.With("component", "meta"),
	})
	if err != nil {
		return fmt.Errorf("metastore: %w", err)
	}
	defer ms.Close()
	m.ObserveRaft(ms)

	// 2. Storage and the broker. The disk reserve first: a node that starts
	// on a full disk refuses new data from its first request.
	disk := reserve.New(cfg.DataDir, cfg.Storage.DiskReserveBytes, log.With("component", "disk"))
	disk.OnChange = func(full bool) {
		if full {
			m.DataDiskFull.Set(1)
		} else {
			m.DataDiskFull.Set(0)
		}
	}
	disk.Check()
	go disk.Run(ctx, time.Second)
	w, err := wal.Open(filepath.Join(cfg.DataDir, "ingress"), wal.Options{Logger: log.With("component", "wal")})
	if err != nil {
		return fmt.Errorf("ingress log: %w", err)
	}
	defer w.Close()
	b := broker.New(broker.Config{
		DataDir:              cfg.DataDir,
		NodeID:               cfg.NodeID,
		DefaultPartitions:    cfg.Topic.DefaultPartitions,
		MaxPartitions:        cfg.Topic.MaxPartitions,
		DefaultRetentionMs:   cfg.Topic.DefaultRetentionAge.Milliseconds(),
		DefaultVisibilityMs:  cfg.Topic.DefaultVisibilityTimeout.Milliseconds(),
		DefaultMaxInFlight:   cfg.Topic.DefaultMaxInFlightPerPartition,
		DefaultMaxAckedAhead: cfg.Topic.DefaultMaxAckedAheadPerPartition,
		SegmentBytes:         cfg.Storage.SegmentBytes,
		Codec:                codec,
		Level:                cfg.Storage.CompressionLevel,
		SkipCorrupt:          cfg.Storage.SkipCorrupt,
		IdleEviction:         cfg.Storage.IdleLogEviction,
		RetentionSweep:       cfg.Storage.RetentionSweep,
		MaxConsumeWait:       cfg.HTTP.MaxConsumeWait,
		MaxConsumeBytes:      int(cfg.HTTP.MaxConsumeBytes),
		Logger:               log.With("component", "broker"),
		Disk:                 disk,
	}, ms, w, m)
	b.Start()
	defer b.Close()

	// 3. Dispatch from the ingress WAL into the partition logs, through the
	// same commit seam the cluster and fan-out use.
	router := &route.Router{Self: cfg.NodeID, Owner: ms.Owner, Local: route.CommitFunc(b.CommitIncarnation)}
	var cv *clusterView
	if clustered {
		if cv, err = startCluster(ctx, cfg, raftAdvertise, ms, b, tlsCfg, log); err != nil {
			return err
		}
		defer cv.pool.Close()
		defer cv.stopMoves()
		router.Remote = cv
	}
	d := &dispatch.Dispatcher{WAL: w, Commit: router, Metrics: m, Logger: log.With("component", "dispatch"),
		Discard:    dispatch.LeaderDiscarder(ms),
		Partitions: func(topic string) int { t, _ := ms.Topic(topic); return t.Partitions }}
	if clustered {
		d.Reroute = cv.reroute
	}
	dctx, stopDispatch := context.WithCancel(context.Background())
	var dwg sync.WaitGroup
	dwg.Add(1)
	go func() { defer dwg.Done(); d.Run(dctx) }()
	defer func() { stopDispatch(); dwg.Wait() }()

	// 4. Startup reconcile, then readiness.
	var startupDone atomic.Bool
	go func() {
		rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := ms.WaitLeader(rctx); err == nil {
			b.ReconcileStartup(rctx, adopt)
		}
		b.OpenCreateGate()
		startupDone.Store(true)
		m.BootDuration.Set(time.Since(start).Seconds())
		log.Info("node ready", "node_id", cfg.NodeID, "boot_seconds", time.Since(start).Seconds())
	}()
	ready := func() (bool, string) {
		leader, _ := ms.Leader()
		switch {
		case leader == "":
			return false, "no Raft leader known"
		case !ms.AppliedCaughtUp():
			return false, "metastore replica not caught up"
		case !startupDone.Load():
			return false, "startup reconcile not done"
		case clustered && !ms.Admitted():
			return false, "not admitted to the cluster yet"
		case clustered && cv.node.LeaderRPC() == "":
			return false, "the leader's node-RPC address is not known yet"
		case clustered && !cv.node.Recorded():
			return false, "this node's member record is not in the metastore yet"
		case errors.Is(w.Health(), wal.ErrFenced):
			return false, "the ingress log is fenced after a disk error (produce refused; see the node's log)"
		case disk.Full():
			return false, "the data disk is full: produce and topic create are refused until space is freed; topic delete works"
		}
		return true, ""
	}

	var authn httpapi.Authenticator
	if cfg.Security.Enabled {
		a := auth.NewAuthenticator(ms, m.AuthFailures.Inc)
		a.CountFailuresOnceReady(func() bool { ok, _ := ready(); return ok })
		authn = a
		go seedRoot(ctx, ms, cfg.Security, log)
	}
	fan := fanout.New(fanout.Config{
		MaxBatchRecords: cfg.Fanout.MaxBatchRecords,
		MaxBatchBytes:   int(cfg.Fanout.MaxBatchBytes),
		Linger:          cfg.Fanout.Linger,
		Logger:          log.With("component", "fanout"),
	}, cfg.NodeID, ms, b.Registry(), b, b, router, m)
	fan.Start()
	defer fan.Close()
	api := httpapi.New(b, fan, m, authn, ready, log.With("component", "http"))
	api.SetDataDir(cfg.DataDir)
	api.SetUsers(auth.NewManager(ms, b.MetaErr), ms)
	api.SetClusterAdmin(&clusterOps{self: cfg.NodeID, ms: ms, mapE: b.MetaErr})
	if clustered {
		api.SetCluster(cv)
		stopRPC, err := serveRPC(cfg, &nodeHandler{b: b, fan: fan, ms: ms, node: cv.node, api: api}, tlsCfg, refusedCounter(m, rpc.Plane), log)
		if err != nil {
			return err
		}
		defer stopRPC()
		// Leadership goes first on a graceful stop, so the others do not
		// wait out an election timeout.
		defer ms.TransferLeadership()
	}
	return serveHTTP(ctx, cfg, api, httpTLS, log)
}

// serveHTTP serves until ctx ends, then drains within the grace period.
func serveHTTP(ctx context.Context, cfg config.Config, h http.Handler, tlsCfg *tls.Config, log *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		return fmt.Errorf("http listener: %w", err)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	srv := &http.Server{Handler: h, ReadTimeout: cfg.HTTP.ReadTimeout, WriteTimeout: cfg.HTTP.WriteTimeout,
		IdleTimeout: cfg.HTTP.IdleTimeout, ReadHeaderTimeout: cfg.HTTP.ReadTimeout, TLSConfig: tlsCfg}
	if cfg.HTTP.PprofAddr != "" {
		go servePprof(cfg.HTTP.PprofAddr, log)
	}
	log.Info("serving the client API", "addr", ln.Addr().String(), "https", tlsCfg != nil)
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
	return nil
}

func servePprof(addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	log.Warn("pprof listener is unauthenticated", "addr", addr)
	if err := http.ListenAndServe(addr, mux); err != nil {
		log.Error("pprof listener", "err", err)
	}
}

// advertise derives the Raft address peers dial: the configured one; else
// this node's own entry in cluster.peers (the address the others were told
// to dial, and the one a bootstrap records); else, binding every interface,
// loopback with the cluster port (a node with no peers: nobody else dials
// it); else "" (the bind address is dialable as it is).
func advertise(nodeID string, c config.ClusterConfig) string {
	if c.Advertise != "" {
		return c.Advertise
	}
	for _, p := range c.Peers {
		if p.ID == nodeID {
			return p.Addr
		}
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil || (host != "" && host != "0.0.0.0" && host != "::") {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// checkDataDir binds the data directory to this node's id and refuses a
// start that would treat topic data as orphans because the metastore is
// gone (package datadir); adopt says the operator chose to re-register it.
func checkDataDir(cfg *config.Config, log *slog.Logger) (adopt bool, err error) {
	id, fromFile, err := datadir.Claim(cfg.DataDir, cfg.NodeID, !cfg.NodeIDDefaulted)
	if err != nil {
		return false, err
	}
	if fromFile {
		log.Info("node id taken from the data directory (none configured; the host name default differs)",
			"node_id", id, "host_name", cfg.NodeID, "file", datadir.IDFile)
	}
	cfg.NodeID = id
	hasState, err := meta.HasState(filepath.Join(cfg.DataDir, "metastore"))
	if err != nil {
		return false, err
	}
	adopt, err = datadir.CheckOrphans(cfg.DataDir, hasState, cfg.Recovery.OrphanData)
	if err == nil && !hasState && cfg.Recovery.OrphanData == datadir.OrphanDiscard {
		log.Warn("no metastore state: topic data on disk will be deleted by the startup reconcile (recovery.orphan_data=discard)")
	}
	return adopt, err
}

// raftBind is where Raft listens: cluster.addr, except that a node with no
// peers binds loopback when cluster.addr names every interface (the
// default), since nobody else has a reason to dial it. Its port still
// authenticates (package peerauth).
func raftBind(c config.ClusterConfig, clustered bool, log *slog.Logger) string {
	host, port, err := net.SplitHostPort(c.Addr)
	if clustered || err != nil || (host != "" && host != "0.0.0.0" && host != "::") {
		return c.Addr
	}
	bind := net.JoinHostPort("127.0.0.1", port)
	log.Info("no cluster peers configured: the Raft port listens on loopback only", "addr", bind)
	return bind
}

// refusedCounter counts the connections a cluster port's door refused.
func refusedCounter(m *metrics.Metrics, plane string) func(string) {
	return func(reason string) { m.ClusterRefused.WithLabelValues(plane, reason).Inc() }
}

// clientTLS loads the client API's certificate, if one is configured:
// loaded at start, so a bad file stops the node before it joins anything.
func clientTLS(c config.HTTPConfig) (*tls.Config, error) {
	if c.TLSCertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("client API certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"}}, nil
}

// clusterTLS loads the cluster plane's mutual TLS, or says loudly that it
// runs in plaintext (07-security.md).
func clusterTLS(cfg config.Config, clustered bool, log *slog.Logger) (*clustertls.Config, error) {
	c := cfg.Cluster
	if c.TLSCertFile == "" {
		if clustered {
			log.Warn("the cluster plane (Raft and node RPC) is PLAINTEXT: anyone on the network path can read it; " +
				"set NARAD_CLUSTER_TLS_CERT_FILE, NARAD_CLUSTER_TLS_KEY_FILE and NARAD_CLUSTER_TLS_CA_FILE for mutual TLS")
		}
		return nil, nil
	}
	t, err := clustertls.Load(c.TLSCertFile, c.TLSKeyFile, c.TLSCAFile)
	if err != nil {
		return nil, err
	}
	log.Info("cluster plane on mutual TLS")
	return t, nil
}

// seedRoot creates the root admin at the cluster's first start (whichever
// node leads proposes it; the first proposal wins). A generated password
// is logged by the node whose proposal took effect, so exactly once in the
// cluster's life; later starts and other nodes never log one.
func seedRoot(ctx context.Context, ms *meta.Store, sec config.SecurityConfig, log *slog.Logger) {
	seeded, err := auth.SeedRoot(ctx, ms, sec.AdminPassword, func(err error) {
		log.Warn("seeding the root admin failed; retrying", "err", err)
	})
	switch {
	case err != nil:
		if ctx.Err() == nil {
			log.Error("seeding the root admin", "err", err)
		}
	case seeded && sec.AdminPasswordGenerated:
		log.Warn("created the root admin with a generated password, shown once; set NARAD_ADMIN_PASSWORD before a cluster's first start to choose it",
			"user", auth.AdminUser, "password", sec.AdminPassword)
	case seeded:
		log.Info("created the root admin from NARAD_ADMIN_PASSWORD", "user", auth.AdminUser)
	}
}
