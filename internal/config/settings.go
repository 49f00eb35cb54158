package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// setting describes one configuration value once: its file key (also the key
// flags are passed under), its environment name, and where it lives in
// Config. The Go type behind field decides how text is parsed.
type setting struct {
	key    string // dotted file key, e.g. "http.read_timeout"
	env    string
	millis bool // a *_MS duration: a bare integer means milliseconds
	secret bool // environment only
	usage  string
	field  func(*Config) any // pointer into the Config
}

var settings = []setting{
	{key: "http.addr", env: "NARAD_HTTP_ADDR", usage: "HTTP API listen address",
		field: func(c *Config) any { return &c.HTTP.Addr }},
	{key: "http.read_timeout", env: "NARAD_HTTP_READ_TIMEOUT", usage: "HTTP read timeout",
		field: func(c *Config) any { return &c.HTTP.ReadTimeout }},
	{key: "http.write_timeout", env: "NARAD_HTTP_WRITE_TIMEOUT", usage: "HTTP write timeout (must exceed the max consume wait plus 5s)",
		field: func(c *Config) any { return &c.HTTP.WriteTimeout }},
	{key: "http.idle_timeout", env: "NARAD_HTTP_IDLE_TIMEOUT", usage: "HTTP keep-alive idle timeout",
		field: func(c *Config) any { return &c.HTTP.IdleTimeout }},
	{key: "http.shutdown_grace", env: "NARAD_HTTP_SHUTDOWN_GRACE", usage: "time given to in-flight requests at shutdown",
		field: func(c *Config) any { return &c.HTTP.ShutdownGrace }},
	{key: "http.max_consume_wait", env: "NARAD_HTTP_MAX_CONSUME_WAIT", usage: "longest long-poll a consume may ask for",
		field: func(c *Config) any { return &c.HTTP.MaxConsumeWait }},
	{key: "http.max_consume_bytes", env: "NARAD_HTTP_MAX_CONSUME_BYTES", usage: "most key and payload bytes in one consume or replay answer (one record always fits)",
		field: func(c *Config) any { return &c.HTTP.MaxConsumeBytes }},
	{key: "http.pprof_addr", env: "NARAD_HTTP_PPROF_ADDR", usage: "pprof listen address",
		field: func(c *Config) any { return &c.HTTP.PprofAddr }},
	{key: "http.h2c", env: "NARAD_HTTP_H2C", usage: "offer HTTP/2 without TLS (prior knowledge) beside HTTP/1.1 on the plain HTTP listener",
		field: func(c *Config) any { return &c.HTTP.H2C }},
	{key: "http.tls_cert_file", env: "NARAD_HTTP_TLS_CERT_FILE", usage: "certificate (PEM) to serve the client API over HTTPS",
		field: func(c *Config) any { return &c.HTTP.TLSCertFile }},
	{key: "http.tls_key_file", env: "NARAD_HTTP_TLS_KEY_FILE", usage: "its private key (PEM)",
		field: func(c *Config) any { return &c.HTTP.TLSKeyFile }},
	{key: "node_id", env: "NARAD_NODE_ID", usage: "this node's id",
		field: func(c *Config) any { return &c.NodeID }},
	{key: "cluster.addr", env: "NARAD_CLUSTER_ADDR", usage: "cluster listen address",
		field: func(c *Config) any { return &c.Cluster.Addr }},
	{key: "cluster.advertise", env: "NARAD_CLUSTER_ADVERTISE", usage: "cluster address peers dial",
		field: func(c *Config) any { return &c.Cluster.Advertise }},
	{key: "cluster.peers", env: "NARAD_CLUSTER_PEERS", usage: "peers as id@host:port,…",
		field: func(c *Config) any { return &c.Cluster.Peers }},
	{key: "cluster.initial_members", env: "NARAD_CLUSTER_INITIAL_MEMBERS", usage: "node ids that bootstrap the cluster, comma separated",
		field: func(c *Config) any { return &c.Cluster.InitialMembers }},
	{key: "cluster.secret", env: "NARAD_CLUSTER_SECRET", secret: true, usage: "shared secret for cluster traffic",
		field: func(c *Config) any { return &c.Cluster.Secret }},
	{key: "cluster.network", env: "NARAD_CLUSTER_NETWORK", usage: "lan or wan: the timings of the metastore and of node leases, the same on every node (docs/cluster.md)",
		field: func(c *Config) any { return &c.Cluster.Network }},
	{key: "cluster.framed_rpc", env: "NARAD_CLUSTER_FRAMED_RPC",
		usage: "call Commit, Fetch and Forward on other nodes over framed connections, not gRPC: a quarter less node CPU per replicated record (docs/replication-performance.md); a node with it off serves gRPC alone, and is called that way",
		field: func(c *Config) any { return &c.Cluster.FramedRPC }},
	{key: "cluster.tls_cert_file", env: "NARAD_CLUSTER_TLS_CERT_FILE", usage: "this node's certificate (PEM) for mutual TLS on Raft and node RPC",
		field: func(c *Config) any { return &c.Cluster.TLSCertFile }},
	{key: "cluster.tls_key_file", env: "NARAD_CLUSTER_TLS_KEY_FILE", usage: "its private key (PEM)",
		field: func(c *Config) any { return &c.Cluster.TLSKeyFile }},
	{key: "cluster.tls_ca_file", env: "NARAD_CLUSTER_TLS_CA_FILE", usage: "the CA (PEM) every node's certificate must chain to",
		field: func(c *Config) any { return &c.Cluster.TLSCAFile }},
	{key: "data_dir", env: "NARAD_DATA_DIR", usage: "data directory",
		field: func(c *Config) any { return &c.DataDir }},
	{key: "topic.default_partitions", env: "NARAD_TOPIC_DEFAULT_PARTITIONS", usage: "partitions of a new topic",
		field: func(c *Config) any { return &c.Topic.DefaultPartitions }},
	{key: "topic.max_partitions", env: "NARAD_TOPIC_MAX_PARTITIONS", usage: "most partitions a topic may have",
		field: func(c *Config) any { return &c.Topic.MaxPartitions }},
	{key: "topic.default_retention_age_ms", env: "NARAD_TOPIC_DEFAULT_RETENTION_AGE_MS", millis: true, usage: "retention of a new topic",
		field: func(c *Config) any { return &c.Topic.DefaultRetentionAge }},
	{key: "topic.default_visibility_timeout_ms", env: "NARAD_TOPIC_DEFAULT_VISIBILITY_TIMEOUT_MS", millis: true, usage: "visibility timeout of a new topic",
		field: func(c *Config) any { return &c.Topic.DefaultVisibilityTimeout }},
	{key: "topic.default_max_in_flight_per_partition", env: "NARAD_TOPIC_DEFAULT_MAX_IN_FLIGHT_PER_PARTITION", usage: "unacked deliveries per partition",
		field: func(c *Config) any { return &c.Topic.DefaultMaxInFlightPerPartition }},
	{key: "topic.default_max_acked_ahead_per_partition", env: "NARAD_TOPIC_DEFAULT_MAX_ACKED_AHEAD_PER_PARTITION", usage: "acks tracked past the frontier per partition",
		field: func(c *Config) any { return &c.Topic.DefaultMaxAckedAheadPerPartition }},
	{key: "fanout.max_batch_records", env: "NARAD_FANOUT_MAX_BATCH_RECORDS", usage: "records per fan-out batch",
		field: func(c *Config) any { return &c.Fanout.MaxBatchRecords }},
	{key: "fanout.max_batch_bytes", env: "NARAD_FANOUT_MAX_BATCH_BYTES", usage: "bytes per fan-out batch",
		field: func(c *Config) any { return &c.Fanout.MaxBatchBytes }},
	{key: "fanout.linger_ms", env: "NARAD_FANOUT_LINGER_MS", millis: true, usage: "wait to fill a fan-out batch",
		field: func(c *Config) any { return &c.Fanout.Linger }},
	{key: "storage.codec", env: "NARAD_STORAGE_CODEC", usage: "segment codec: none|zstd",
		field: func(c *Config) any { return &c.Storage.Codec }},
	{key: "storage.compression_level", env: "NARAD_STORAGE_COMPRESSION_LEVEL", usage: "zstd level: fastest|default|better|best",
		field: func(c *Config) any { return &c.Storage.CompressionLevel }},
	{key: "storage.segment_bytes", env: "NARAD_STORAGE_SEGMENT_BYTES", usage: "segment size before rolling",
		field: func(c *Config) any { return &c.Storage.SegmentBytes }},
	{key: "storage.idle_log_eviction_ms", env: "NARAD_STORAGE_IDLE_LOG_EVICTION_MS", millis: true, usage: "close logs idle this long (0: never)",
		field: func(c *Config) any { return &c.Storage.IdleLogEviction }},
	{key: "storage.retention_sweep_ms", env: "NARAD_STORAGE_RETENTION_SWEEP_MS", millis: true, usage: "retention sweep interval",
		field: func(c *Config) any { return &c.Storage.RetentionSweep }},
	{key: "storage.skip_corrupt", env: "NARAD_STORAGE_SKIP_CORRUPT",
		usage: "open partition logs past mid-segment damage and skip the damaged records (recorded loss, counted in narad_consumer_corrupt_skipped_total)",
		field: func(c *Config) any { return &c.Storage.SkipCorrupt }},
	{key: "storage.lazy_partition_sync", env: "NARAD_STORAGE_LAZY_PARTITION_SYNC",
		usage: "partition logs fsync records from this node's ingress WAL on the checkpoint cadence, not before they are visible (the WAL holds them durably meanwhile)",
		field: func(c *Config) any { return &c.Storage.LazyPartitionSync }},
	{key: "storage.journal_delay_ms", env: "NARAD_STORAGE_JOURNAL_DELAY_MS", millis: true,
		usage: "wait this long before a journal fdatasync that finds none in flight, so more replicated writes share it: fewer fdatasyncs and less CPU under load, this much more latency on every replicated write (0: none; at most 10ms)",
		field: func(c *Config) any { return &c.Storage.JournalDelay }},
	{key: "replication.heal_after_ms", env: "NARAD_REPLICATION_HEAL_AFTER_MS", millis: true,
		usage: "re-create a replicated partition's copy on a node silent this long on another node (0: never; read on the controller: set every node alike)",
		field: func(c *Config) any { return &c.Replication.HealAfter }},
	{key: "recovery.orphan_data", env: "NARAD_RECOVERY_ORPHAN_DATA",
		usage: "topic data found with no metastore state: refuse (do not start), adopt (re-register the topics on disk), discard (delete it)",
		field: func(c *Config) any { return &c.Recovery.OrphanData }},
	{key: "storage.disk_reserve_bytes", env: "NARAD_STORAGE_DISK_RESERVE_BYTES",
		usage: "room kept on the data disk so topic deletes work when it fills (0: none)",
		field: func(c *Config) any { return &c.Storage.DiskReserveBytes }},
	{key: "limits.produce_records_per_s", env: "NARAD_LIMITS_PRODUCE_RECORDS_PER_S",
		usage: "records a second a user may produce to this node unless its own limits say otherwise (0: unlimited)",
		field: func(c *Config) any { return &c.Limits.ProduceRecordsPerS }},
	{key: "limits.produce_bytes_per_s", env: "NARAD_LIMITS_PRODUCE_BYTES_PER_S",
		usage: "bytes (keys, payloads, header names and values, msg_ids) a second a user may produce to this node unless its own limits say otherwise (0: unlimited)",
		field: func(c *Config) any { return &c.Limits.ProduceBytesPerS }},
	{key: "limits.consume_requests_per_s", env: "NARAD_LIMITS_CONSUME_REQUESTS_PER_S",
		usage: "consume requests (a long poll counts once) a second a user may make to this node unless its own limits say otherwise (0: unlimited)",
		field: func(c *Config) any { return &c.Limits.ConsumeRequestsPerS }},
	{key: "log.level", env: "NARAD_LOG_LEVEL", usage: "debug|info|warn|error",
		field: func(c *Config) any { return &c.Log.Level }},
	{key: "log.format", env: "NARAD_LOG_FORMAT", usage: "json|text",
		field: func(c *Config) any { return &c.Log.Format }},
	{key: "aws.account_id", env: "NARAD_AWS_ACCOUNT_ID", usage: "the 12-digit account id of SQS queue URLs and SQS/SNS ARNs",
		field: func(c *Config) any { return &c.AWS.AccountID }},
	{key: "aws.region", env: "NARAD_AWS_REGION", usage: "the region of SQS/SNS ARNs, and of the signatures the node accepts",
		field: func(c *Config) any { return &c.AWS.Region }},
	{key: "security.enabled", env: "NARAD_SECURITY_ENABLED", usage: "require authentication on the API",
		field: func(c *Config) any { return &c.Security.Enabled }},
	{key: "security.admin_password", env: "NARAD_ADMIN_PASSWORD", secret: true, usage: "admin password (default: random)",
		field: func(c *Config) any { return &c.Security.AdminPassword }},
}

// lookup finds a setting by file key.
func lookup(key string) (setting, bool) {
	for _, s := range settings {
		if s.key == key {
			return s, true
		}
	}
	return setting{}, false
}

// byEnv finds a setting by environment name; validation messages use it to
// name both spellings of a setting.
func byEnv(key string) string {
	if s, ok := lookup(key); ok {
		return key + " (" + s.env + ")"
	}
	return key
}

// set parses text into the setting's field of c.
func (s setting) set(c *Config, text string) error {
	switch p := s.field(c).(type) {
	case *string:
		*p = text
	case *int:
		n, err := parseInt(text)
		if err != nil {
			return err
		}
		*p = int(n)
	case *int64:
		n, err := parseInt(text)
		if err != nil {
			return err
		}
		*p = n
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not a boolean (want true or false)", text)
		}
		*p = b
	case *time.Duration:
		var d time.Duration
		var err error
		if s.millis {
			d, err = parseMillis(text)
		} else {
			d, err = parseDuration(text)
		}
		if err != nil {
			return err
		}
		*p = d
	case *[]string:
		*p = splitList(text)
	case *[]Peer:
		peers, err := ParsePeers(text)
		if err != nil {
			return err
		}
		*p = peers
	default:
		panic(fmt.Sprintf("config: setting %s has unsupported type %T", s.key, p))
	}
	return nil
}

// format renders the setting's current value of c the way an operator would
// type it; the help text shows defaults with it.
func (s setting) format(c *Config) string {
	if s.secret {
		return "(environment only)"
	}
	switch p := s.field(c).(type) {
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case *bool:
		return strconv.FormatBool(*p)
	case *time.Duration:
		if s.millis {
			return strconv.FormatInt(p.Milliseconds(), 10)
		}
		return p.String()
	case *[]string:
		return strings.Join(*p, ",")
	case *[]Peer:
		return FormatPeers(*p)
	}
	return ""
}

// Setting is the public description of one setting, for help text and docs.
type Setting struct {
	Key     string // file key and flag-map key, e.g. "http.addr"
	Env     string // e.g. "NARAD_HTTP_ADDR"
	Default string // compiled default as text
	Secret  bool   // environment only
	Usage   string
	// Kind is the value's type: KindString, KindInt, KindBool,
	// KindDuration (also takes bare milliseconds for a *_ms setting) or
	// KindList (comma separated), so a flag can be typed like it.
	Kind string
}

// The kinds of Setting.Kind.
const (
	KindString   = "string"
	KindInt      = "int"
	KindBool     = "bool"
	KindDuration = "duration"
	KindList     = "list"
)

// Settings lists every setting in file order with its compiled default.
func Settings() []Setting {
	def := Default()
	out := make([]Setting, 0, len(settings))
	for _, s := range settings {
		out = append(out, Setting{Key: s.key, Env: s.env, Default: s.format(&def), Secret: s.secret, Usage: s.usage, Kind: s.kind()})
	}
	return out
}

// kind names the Go type behind the setting.
func (s setting) kind() string {
	var c Config
	switch s.field(&c).(type) {
	case *int, *int64:
		return KindInt
	case *bool:
		return KindBool
	case *time.Duration:
		return KindDuration
	case *[]string, *[]Peer:
		return KindList
	}
	return KindString
}

// CheckSetting reports whether text parses as a value of the setting
// key, with the message any layer would give; ranges and combinations
// are Validate's, once every layer is applied.
func CheckSetting(key, text string) error {
	s, ok := lookup(key)
	if !ok {
		return fmt.Errorf("unknown setting %q", key)
	}
	var c Config
	return s.set(&c, text)
}
