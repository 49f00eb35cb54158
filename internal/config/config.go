package config

import (
	"os"
	"time"
)

// Config is the whole broker configuration. Durations named *_MS in the
// environment are plain time.Durations here; the unit only matters at the
// edges where people type them.
type Config struct {
	HTTP        HTTPConfig
	NodeID      string
	Cluster     ClusterConfig
	DataDir     string
	Topic       TopicDefaults
	Fanout      FanoutConfig
	Storage     StorageConfig
	Replication ReplicationConfig
	Log         LogConfig
	Security    SecurityConfig
	Recovery    RecoveryConfig
	Limits      LimitsConfig
	AWS         AWSConfig

	// NodeIDDefaulted is true when no layer set node_id, so NodeID is the
	// host name: a data directory's stored id then wins over it (package
	// datadir), since host names change when containers are recreated.
	NodeIDDefaulted bool

	// Dev is true when the developer preset was applied (ApplyDev), so the
	// server can say so loudly at start.
	Dev bool
}

// HTTPConfig is the public /v1 API listener.
type HTTPConfig struct {
	Addr          string
	ReadTimeout   time.Duration
	WriteTimeout  time.Duration
	IdleTimeout   time.Duration
	ShutdownGrace time.Duration
	// MaxConsumeWait caps a long-poll consume; the write timeout must exceed
	// it plus the node RPC timeout, or a long poll (forwarded to its
	// partition's owner) would be cut off mid-wait.
	MaxConsumeWait time.Duration
	// MaxConsumeBytes caps the keys and payloads of one consume or replay
	// answer (max=N notwithstanding), so a batch of large records cannot
	// build an answer of gigabytes; one record is always delivered, however
	// large. Bounded so that a forwarded answer fits a node RPC message.
	MaxConsumeBytes int64
	// PprofAddr, when not empty, serves net/http/pprof on its own listener.
	PprofAddr string
	// H2C offers HTTP/2 without TLS (prior knowledge: a client that starts
	// with the HTTP/2 preface) on a plain listener, beside HTTP/1.1 on the
	// same port; clients that send many requests at once get them on one
	// connection. With TLS it changes nothing.
	H2C bool
	// TLSCertFile and TLSKeyFile, both or neither, serve the client API
	// over HTTPS (docs/security.md, "TLS on the client API").
	TLSCertFile, TLSKeyFile string
}

// The values of cluster.network.
const (
	NetworkLAN = "lan"
	NetworkWAN = "wan"
)

// ClusterConfig is the node-to-node side.
type ClusterConfig struct {
	Addr string
	// Advertise is the address peers should dial; empty means derive it
	// from Addr and the host.
	Advertise      string
	Peers          []Peer
	InitialMembers []string
	// Secret authenticates cluster traffic. Environment only.
	Secret string
	// Network is NetworkLAN or NetworkWAN: which timings the metastore and
	// node leases run on (docs/cluster.md). Every node must use the same.
	Network string
	// FramedRPC serves framed connections beside gRPC and calls Commit,
	// Fetch and Forward on other nodes over them (package rpc, framed.go).
	// On by default (docs/replication-performance.md, "Framed connections
	// became the default"). Off, a node serves and calls gRPC alone, as
	// before framed connections; nodes with it on call it through gRPC,
	// as they call an older release.
	FramedRPC bool
	// TLS files for mutual TLS on Raft and node RPC: all three or none
	// (docs/security.md). Paths may be in the file; the files are secrets.
	TLSCertFile, TLSKeyFile, TLSCAFile string
}

// TopicDefaults apply to topics created without the matching field.
type TopicDefaults struct {
	DefaultPartitions                int
	MaxPartitions                    int
	DefaultRetentionAge              time.Duration
	DefaultVisibilityTimeout         time.Duration
	DefaultMaxInFlightPerPartition   int
	DefaultMaxAckedAheadPerPartition int
}

// FanoutConfig bounds the batches copied from a parent topic to its children.
type FanoutConfig struct {
	MaxBatchRecords int
	MaxBatchBytes   int64
	Linger          time.Duration
}

// StorageConfig is the on-disk log.
type StorageConfig struct {
	Codec            string // none | zstd
	CompressionLevel string // fastest | default | better | best
	SegmentBytes     int64
	// IdleLogEviction closes partition logs unused for this long; 0 disables.
	IdleLogEviction time.Duration
	RetentionSweep  time.Duration
	// SkipCorrupt is the operator's switch for mid-segment damage: a
	// partition whose active segment holds an unreadable frame followed by
	// valid ones refuses to open (503 naming the damaged offsets) unless
	// this is on; then it opens and readers skip the damaged records,
	// counting and logging them. Off by default: skipping is a loss.
	SkipCorrupt bool
	// LazyPartitionSync lets records from this node's ingress WAL into
	// partitions it owns become visible before the partition log's
	// fdatasync: the WAL fsynced them before their 202 and is kept until
	// the log is flushed (on the dispatch checkpoint cadence). Off, every
	// partition commit fsyncs before it is visible, as before: the A/B
	// switch of issue 12's "one fsync per record path".
	LazyPartitionSync bool
	// DiskReserveBytes is room kept on the data disk for topic deletes
	// (package reserve); 0 keeps none.
	DiskReserveBytes int64
	// JournalDelay is how long the node's journal, finding no sync in
	// flight, waits for more replicated writes to share its fdatasync
	// (journal.Options.Delay); 0, the default, waits not at all.
	JournalDelay time.Duration
}

// ReplicationConfig is the controller's care of replicated partitions.
// It is read on the node that is the controller (the metastore leader),
// which can be any node: configure every node alike.
type ReplicationConfig struct {
	// HealAfter: a replicated partition's copy on a node not heard from
	// for longer is re-created on a live node (0: never). Long enough
	// that a restart or a short outage does not cost a full copy.
	HealAfter time.Duration
}

// LogConfig is the process logger.
type LogConfig struct {
	Level  string // debug | info | warn | error
	Format string // json | text
}

// SecurityConfig is API authentication.
// RecoveryConfig holds the operator's deliberate choices for damaged or
// incomplete data directories.
type RecoveryConfig struct {
	// OrphanData is what a start does with topic data when the metastore
	// has no state (package datadir): refuse (default), adopt, discard.
	OrphanData string
}

// LimitsConfig are the per-user rate limits of a user that has none of
// its own (docs/configuration.md), per second on this node; 0 is
// unlimited (the default). They apply field by field: a user that sets
// one limit of its own keeps these defaults for the others. Give every
// node the same values (each limits the requests it receives).
type LimitsConfig struct {
	ProduceRecordsPerS  int64
	ProduceBytesPerS    int64
	ConsumeRequestsPerS int64
}

// MaxLimits bound the limits (the users API's bounds, meta.MaxRate: a
// test in package server holds the two together).
var MaxLimits = LimitsConfig{ProduceRecordsPerS: 10_000_000, ProduceBytesPerS: 10 << 30, ConsumeRequestsPerS: 1_000_000}

// MinPasswordBytes and MaxPasswordBytes bound NARAD_ADMIN_PASSWORD: the
// users API's password bounds (meta.MinPasswordBytes and
// meta.MaxPasswordBytes), restated here because config sits below meta;
// a test in package server holds the two together, so a password the
// seeding would refuse never starts a node.
const (
	MinPasswordBytes = 8
	MaxPasswordBytes = 256
)

type SecurityConfig struct {
	Enabled bool
	// AdminPassword is environment only. When security is on and none was
	// given, Load generates one and sets AdminPasswordGenerated so the
	// server can print it once.
	AdminPassword          string
	AdminPasswordGenerated bool
}

// AWSConfig names the node to clients of the SQS and SNS edge
// (docs/aws.md): the account and region of its queue URLs and ARNs.
type AWSConfig struct {
	AccountID string
	Region    string
}

// Default returns the compiled defaults. The node id defaults to the host
// name, which is the one default that depends on the machine.
func Default() Config {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "narad"
	}
	return Config{
		HTTP: HTTPConfig{
			Addr:            ":7942",
			ReadTimeout:     10 * time.Second,
			WriteTimeout:    30 * time.Second,
			IdleTimeout:     60 * time.Second,
			ShutdownGrace:   10 * time.Second,
			MaxConsumeWait:  10 * time.Second,
			MaxConsumeBytes: 8 << 20,
			H2C:             true,
		},
		NodeID:  host,
		Cluster: ClusterConfig{Addr: ":7943", Network: NetworkLAN, FramedRPC: true},
		DataDir: "data",
		Topic: TopicDefaults{
			DefaultPartitions:                3,
			MaxPartitions:                    108,
			DefaultRetentionAge:              7 * 24 * time.Hour,
			DefaultVisibilityTimeout:         30 * time.Second,
			DefaultMaxInFlightPerPartition:   1024,
			DefaultMaxAckedAheadPerPartition: 1024,
		},
		Fanout: FanoutConfig{
			MaxBatchRecords: 4096,
			MaxBatchBytes:   4 << 20,
			Linger:          25 * time.Millisecond,
		},
		Recovery: RecoveryConfig{OrphanData: "refuse"},
		AWS:      AWSConfig{AccountID: "000000000000", Region: "us-east-1"},
		Storage: StorageConfig{
			Codec:             "none",
			CompressionLevel:  "fastest",
			SegmentBytes:      64 << 20,
			IdleLogEviction:   30 * time.Minute,
			RetentionSweep:    time.Minute,
			DiskReserveBytes:  64 << 20,
			LazyPartitionSync: true,
		},
		Replication: ReplicationConfig{HealAfter: 10 * time.Minute},
		Log:         LogConfig{Level: "info", Format: "json"},
		Security:    SecurityConfig{Enabled: true},
	}
}
