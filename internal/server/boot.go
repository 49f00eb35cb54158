package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/clustertls"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/datadir"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/journal"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/reserve"
	"github.com/narad-io/narad/internal/rpc"
	"github.com/narad-io/narad/internal/storage"
)

// boot is what Run derives from the configuration before it builds any
// component: every check that can refuse a start, done first.
type boot struct {
	lock          io.Closer // the data directory's, held for the process's life
	clustered     bool
	adopt         bool         // re-register orphan topic data (datadir.CheckOrphans)
	raftAdvertise string       // the Raft address peers dial
	disk          datadir.Disk // the data directory's disk id, announced to the cluster
	codec         storage.Codec
	clusterTLS    *clustertls.Config // nil: plaintext cluster plane
	httpTLS       *tls.Config        // nil: plain HTTP
}

// prepare checks the configuration and the data directory. It fixes
// cfg.NodeID when the data directory knows better (package datadir).
//
// The data directory is locked first (datadir.Lock): a second node on it
// is refused by the first one's pid before anything of it is read.
func prepare(cfg *config.Config, log *slog.Logger) (n boot, err error) {
	if cfg.Dev {
		log.Warn("developer mode: loopback only, authentication off", "data_dir", cfg.DataDir)
	}
	n = boot{clustered: len(cfg.Cluster.Peers) > 0}
	if n.clustered && cfg.Cluster.Secret == "" {
		return n, errors.New("cluster peers are configured but NARAD_CLUSTER_SECRET is not: node RPC refuses to run without it")
	}
	if n.lock, err = datadir.Lock(cfg.DataDir); err != nil {
		return n, err
	}
	defer func() {
		if err != nil {
			n.lock.Close()
		}
	}()
	hadDisk, err := datadir.HasDisk(cfg.DataDir) // before checkDataDir's Claim writes one into a new directory
	if err != nil {
		return n, err
	}
	metaState := false
	if n.adopt, metaState, err = checkDataDir(cfg, log); err != nil {
		return n, err
	}
	if n.disk, err = datadir.ClaimDisk(cfg.DataDir); err != nil {
		return n, err
	}
	if n.disk.Upgraded {
		log.Info("disk id written to a data directory from before disk ids", "disk_id", n.disk.ID, "file", datadir.DiskFile)
	}
	if n.clustered && hadDisk && !metaState {
		old := n.disk.ID
		if n.disk, err = datadir.RenewDisk(cfg.DataDir); err != nil {
			return n, err
		}
		log.Warn("the metastore's Raft state is gone from a data directory that had a disk id: it gets a new one, so this node "+
			"abstains from metastore elections until the cluster records it, and its partition copies are caught up again",
			"old_disk_id", old, "disk_id", n.disk.ID, "file", datadir.DiskFile)
	}
	if n.raftAdvertise = advertise(cfg.NodeID, cfg.Cluster); n.raftAdvertise == "" {
		n.raftAdvertise = cfg.Cluster.Addr
	}
	if n.codec, err = storage.ParseCodec(cfg.Storage.Codec); err != nil {
		return n, err
	}
	if n.clusterTLS, err = clusterTLS(*cfg, n.clustered, log); err != nil {
		return n, err
	}
	if n.httpTLS, err = clientTLS(cfg.HTTP); err != nil {
		return n, err
	}
	return n, nil
}

// checkDataDir binds the data directory to this node's id and refuses a
// start that would treat topic data as orphans because the metastore is
// gone (package datadir); adopt says the operator chose to re-register it.
func checkDataDir(cfg *config.Config, log *slog.Logger) (adopt, hasState bool, err error) {
	id, fromFile, err := datadir.Claim(cfg.DataDir, cfg.NodeID, !cfg.NodeIDDefaulted)
	if err != nil {
		return false, false, err
	}
	if fromFile {
		log.Info("node id taken from the data directory (none configured; the host name default differs)",
			"node_id", id, "host_name", cfg.NodeID, "file", datadir.IDFile)
	}
	cfg.NodeID = id
	hasState, err = meta.HasState(filepath.Join(cfg.DataDir, "metastore"))
	if err != nil {
		return false, false, err
	}
	adopt, err = datadir.CheckOrphans(cfg.DataDir, hasState, cfg.Recovery.OrphanData)
	if err == nil && !hasState && cfg.Recovery.OrphanData == datadir.OrphanDiscard {
		log.Warn("no metastore state: topic data on disk will be deleted by the startup reconcile (recovery.orphan_data=discard)")
	}
	return adopt, hasState, err
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
// runs in plaintext (docs/security.md).
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

// newPool is the node RPC client pool, on mutual TLS when configured,
// calling the data path over framed connections when cluster.framed_rpc
// is set.
func newPool(cfg config.Config, t *clustertls.Config) *rpc.Pool {
	var p *rpc.Pool
	if t != nil {
		p = rpc.NewTLSPool(cfg.Cluster.Secret, t.Client)
	} else {
		p = rpc.NewPool(cfg.Cluster.Secret)
	}
	p.CallFramed(cfg.Cluster.FramedRPC)
	return p
}

// metaOptions configure the metastore: a node with no peers bootstraps a
// one-member Raft; in a cluster, leader confirmations go out on pool.
func metaOptions(cfg config.Config, n boot, m *metrics.Metrics, pool *rpc.Pool, log *slog.Logger) meta.Options {
	o := meta.Options{
		TLS:            n.clusterTLS,
		Secret:         []byte(cfg.Cluster.Secret),
		StreamRefused:  refusedCounter(m, "raft"),
		Dir:            filepath.Join(cfg.DataDir, "metastore"),
		NodeID:         cfg.NodeID,
		BindAddr:       raftBind(cfg.Cluster, n.clustered, log),
		Advertise:      advertise(cfg.NodeID, cfg.Cluster),
		Bootstrap:      !n.clustered,
		InitialServers: initialServers(cfg, n.raftAdvertise),
		DiskID:         n.disk.ID,
		Logger:         log.With("component", "meta"),
	}
	if pool != nil {
		o.Confirmer = leaderConfirmer{pool: pool}
		o.Forwarder = leaderConfirmer{pool: pool}
	}
	return withNetwork(o, cfg.Cluster.Network)
}

// openDisk is the data disk's reserve, checked once now: a node that
// starts on a full disk refuses new data from its first request.
func openDisk(cfg config.Config, m *metrics.Metrics, log *slog.Logger) *reserve.Reserve {
	disk := reserve.New(cfg.DataDir, cfg.Storage.DiskReserveBytes, log.With("component", "disk"))
	disk.OnChange = func(full bool) {
		if full {
			m.DataDiskFull.Set(1)
		} else {
			m.DataDiskFull.Set(0)
		}
	}
	disk.Check()
	return disk
}

// brokerConfig is the broker's share of the configuration.
func brokerConfig(cfg config.Config, n boot, disk *reserve.Reserve, log *slog.Logger) broker.Config {
	return broker.Config{
		DataDir:              cfg.DataDir,
		NodeID:               cfg.NodeID,
		DefaultPartitions:    cfg.Topic.DefaultPartitions,
		MaxPartitions:        cfg.Topic.MaxPartitions,
		DefaultRetentionMs:   cfg.Topic.DefaultRetentionAge.Milliseconds(),
		DefaultVisibilityMs:  cfg.Topic.DefaultVisibilityTimeout.Milliseconds(),
		DefaultMaxInFlight:   cfg.Topic.DefaultMaxInFlightPerPartition,
		DefaultMaxAckedAhead: cfg.Topic.DefaultMaxAckedAheadPerPartition,
		SegmentBytes:         cfg.Storage.SegmentBytes,
		Codec:                n.codec,
		Level:                cfg.Storage.CompressionLevel,
		SkipCorrupt:          cfg.Storage.SkipCorrupt,
		IdleEviction:         cfg.Storage.IdleLogEviction,
		RetentionSweep:       cfg.Storage.RetentionSweep,
		MaxConsumeWait:       cfg.HTTP.MaxConsumeWait,
		MaxConsumeBytes:      int(cfg.HTTP.MaxConsumeBytes),
		Logger:               log.With("component", "broker"),
		Disk:                 disk,
	}
}

// journalOptions configures the node's journal (package journal).
func journalOptions(cfg config.Config, m *metrics.Metrics, log *slog.Logger) journal.Options {
	return journal.Options{Logger: log.With("component", "journal"),
		Synced: func(d time.Duration) { m.JournalSyncDuration.Observe(d.Seconds()) },
		Delay:  cfg.Storage.JournalDelay}
}

// fanoutConfig is the fan-out engine's share of the configuration.
func fanoutConfig(cfg config.Config, log *slog.Logger) fanout.Config {
	return fanout.Config{MaxBatchRecords: cfg.Fanout.MaxBatchRecords, MaxBatchBytes: int(cfg.Fanout.MaxBatchBytes),
		Linger: cfg.Fanout.Linger, Logger: log.With("component", "fanout")}
}

// refusedCounter counts the connections a cluster port's peer handshake
// refused.
func refusedCounter(m *metrics.Metrics, plane string) func(string) {
	return func(reason string) { m.ClusterRefused.WithLabelValues(plane, reason).Inc() }
}
