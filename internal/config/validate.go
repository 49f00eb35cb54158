package config

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/narad-io/narad/internal/datadir"
)

// ValidationError lists every problem found, so an operator fixes them all
// in one go instead of one restart per mistake.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid configuration: " + e.Problems[0]
	}
	return "invalid configuration:\n  " + strings.Join(e.Problems, "\n  ")
}

// Validate checks ranges and the relations between settings. It returns a
// *ValidationError or nil.
func (c Config) Validate() error {
	var v validator

	v.check(checkListenAddr(c.HTTP.Addr), "http.addr")
	c.checkDevLoopback(&v)
	v.positive("http.read_timeout", c.HTTP.ReadTimeout)
	v.positive("http.write_timeout", c.HTTP.WriteTimeout)
	v.positive("http.idle_timeout", c.HTTP.IdleTimeout)
	v.nonNegative("http.shutdown_grace", c.HTTP.ShutdownGrace)
	v.positive("http.max_consume_wait", c.HTTP.MaxConsumeWait)
	if c.HTTP.WriteTimeout > 0 && c.HTTP.WriteTimeout <= c.HTTP.MaxConsumeWait+forwardMargin {
		v.addf("%s = %s must exceed http.max_consume_wait = %s plus %s, or long polls (forwarded to a partition's owner: the wait plus the node RPC timeout) are cut off by the write timeout with no answer",
			byEnv("http.write_timeout"), c.HTTP.WriteTimeout, c.HTTP.MaxConsumeWait, forwardMargin)
	}
	v.intRange("http.max_consume_bytes", c.HTTP.MaxConsumeBytes, 1, MaxConsumeBytesLimit)
	if c.HTTP.PprofAddr != "" {
		v.check(checkListenAddr(c.HTTP.PprofAddr), "http.pprof_addr")
	}

	if len(c.AWS.AccountID) != 12 || strings.Trim(c.AWS.AccountID, "0123456789") != "" {
		v.addf("%s must be 12 digits, got %q", byEnv("aws.account_id"), c.AWS.AccountID)
	}
	if !validRegion(c.AWS.Region) {
		v.addf("%s must be a region name of [a-z0-9-] (us-east-1), got %q", byEnv("aws.region"), c.AWS.Region)
	}
	v.check(checkNodeID(c.NodeID), "node_id")
	v.check(checkListenAddr(c.Cluster.Addr), "cluster.addr")
	if c.Cluster.Advertise != "" {
		v.check(checkDialAddr(c.Cluster.Advertise), "cluster.advertise")
	}
	v.oneOf("cluster.network", c.Cluster.Network, NetworkLAN, NetworkWAN)
	c.validatePeers(&v)
	if set := countSet(c.HTTP.TLSCertFile, c.HTTP.TLSKeyFile); set == 1 {
		v.addf("%s and %s go together: set both to serve HTTPS, or neither", byEnv("http.tls_cert_file"), byEnv("http.tls_key_file"))
	}
	if set := countSet(c.Cluster.TLSCertFile, c.Cluster.TLSKeyFile, c.Cluster.TLSCAFile); set != 0 && set != 3 {
		v.addf("%s, %s and %s go together: set all three for mutual TLS, or none", byEnv("cluster.tls_cert_file"),
			byEnv("cluster.tls_key_file"), byEnv("cluster.tls_ca_file"))
	}

	if strings.TrimSpace(c.DataDir) == "" {
		v.addf("%s must not be empty", byEnv("data_dir"))
	}

	t := c.Topic
	v.intRange("topic.max_partitions", int64(t.MaxPartitions), 1, 10000)
	v.intRange("topic.default_partitions", int64(t.DefaultPartitions), 1, int64(max(t.MaxPartitions, 1)))
	v.positive("topic.default_retention_age_ms", t.DefaultRetentionAge)
	v.positive("topic.default_visibility_timeout_ms", t.DefaultVisibilityTimeout)
	v.intRange("topic.default_max_in_flight_per_partition", int64(t.DefaultMaxInFlightPerPartition), 1, 1<<20)
	v.intRange("topic.default_max_acked_ahead_per_partition", int64(t.DefaultMaxAckedAheadPerPartition), 1, 1<<20)

	v.intRange("limits.produce_records_per_s", c.Limits.ProduceRecordsPerS, 0, MaxLimits.ProduceRecordsPerS)
	v.intRange("limits.produce_bytes_per_s", c.Limits.ProduceBytesPerS, 0, MaxLimits.ProduceBytesPerS)
	v.intRange("limits.consume_requests_per_s", c.Limits.ConsumeRequestsPerS, 0, MaxLimits.ConsumeRequestsPerS)

	v.intRange("fanout.max_batch_records", int64(c.Fanout.MaxBatchRecords), 1, 1<<20)
	v.intRange("fanout.max_batch_bytes", c.Fanout.MaxBatchBytes, 1, 1<<30)
	v.nonNegative("fanout.linger_ms", c.Fanout.Linger)

	v.oneOf("storage.codec", c.Storage.Codec, "none", "zstd")
	v.oneOf("storage.compression_level", c.Storage.CompressionLevel, "fastest", "default", "better", "best")
	v.intRange("storage.segment_bytes", c.Storage.SegmentBytes, 1<<10, 1<<30)
	v.nonNegative("storage.idle_log_eviction_ms", c.Storage.IdleLogEviction)
	v.positive("storage.retention_sweep_ms", c.Storage.RetentionSweep)
	v.intRange("storage.disk_reserve_bytes", c.Storage.DiskReserveBytes, 0, 1<<34)

	v.nonNegative("replication.heal_after_ms", c.Replication.HealAfter)
	v.nonNegative("storage.journal_delay_ms", c.Storage.JournalDelay)
	if c.Storage.JournalDelay > MaxJournalDelay {
		v.addf("%s must be at most %s, got %s", byEnv("storage.journal_delay_ms"), MaxJournalDelay, c.Storage.JournalDelay)
	}

	v.oneOf("recovery.orphan_data", c.Recovery.OrphanData, datadir.Policies...)

	v.oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	v.oneOf("log.format", c.Log.Format, "json", "text")

	if c.Security.Enabled && c.Security.AdminPassword == "" {
		v.addf("security is enabled but NARAD_ADMIN_PASSWORD is empty")
	} else if n := len(c.Security.AdminPassword); c.Security.Enabled && (n < MinPasswordBytes || n > MaxPasswordBytes) {
		// Refused here, not when seeding: a seeding that cannot hash the
		// password would leave the cluster with no user at all.
		v.addf("NARAD_ADMIN_PASSWORD is %d bytes; a password is %d..%d bytes: set one in that range "+
			"(it seeds the root admin at a cluster's first start only, so on a seeded cluster it may also be unset)",
			n, MinPasswordBytes, MaxPasswordBytes)
	}

	if len(v.problems) > 0 {
		return &ValidationError{Problems: v.problems}
	}
	return nil
}

func (c Config) validatePeers(v *validator) {
	// Peers arrive parsed, but a Config built in code skips ParsePeers, so
	// the same rules are checked again here.
	ids := map[string]bool{}
	others := 0
	for _, p := range c.Cluster.Peers {
		if err := checkNodeID(p.ID); err != nil {
			v.addf("%s: peer %s: %v", byEnv("cluster.peers"), p, err)
		}
		if err := checkDialAddr(p.Addr); err != nil {
			v.addf("%s: peer %s: %v", byEnv("cluster.peers"), p, err)
		}
		if ids[p.ID] {
			v.addf("%s: peer id %q appears twice", byEnv("cluster.peers"), p.ID)
		}
		ids[p.ID] = true
		if p.ID != c.NodeID {
			others++
		}
	}
	seen := map[string]bool{}
	for _, m := range c.Cluster.InitialMembers {
		if seen[m] {
			v.addf("%s: %q appears twice", byEnv("cluster.initial_members"), m)
		}
		seen[m] = true
		if m != c.NodeID && !ids[m] {
			v.addf("%s: %q is neither this node (%q) nor one of the peers", byEnv("cluster.initial_members"), m, c.NodeID)
		}
	}
	// A node that others must dial needs an address they can dial: its own
	// peers entry, an advertise address, or a concrete bind host.
	if others > 0 && !ids[c.NodeID] && c.Cluster.Advertise == "" {
		if host, _, err := net.SplitHostPort(c.Cluster.Addr); err == nil && unspecifiedHost(host) {
			v.addf("%s = %q binds every interface, and this node (%q) is not in %s: set %s to the address peers dial",
				byEnv("cluster.addr"), c.Cluster.Addr, c.NodeID, byEnv("cluster.peers"), byEnv("cluster.advertise"))
		}
	}
	if others > 0 && c.Security.Enabled && c.Cluster.Secret == "" {
		v.addf("cluster peers are set and security is enabled, but NARAD_CLUSTER_SECRET is empty: cluster traffic would be unauthenticated")
	}
}

// forwardMargin is what a long-poll forwarded to a partition's owner adds
// to its wait: the node RPC timeout (docs/configuration.md, "Checks across
// settings"), after which the client gets a 503 — which must still fit in the
// HTTP write timeout.
const forwardMargin = 5 * time.Second

// MaxConsumeBytesLimit bounds http.max_consume_bytes: a forwarded answer
// travels in one node RPC message of at most 64 MiB, and base64 payloads
// grow by a third in JSON.
const MaxConsumeBytesLimit = 32 << 20

// MaxJournalDelay bounds storage.journal_delay_ms: a longer wait would
// only add latency, a sync's worth of writes arriving well within it.
const MaxJournalDelay = 10 * time.Millisecond

type validator struct{ problems []string }

func (v *validator) addf(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) check(err error, key string) {
	if err != nil {
		v.addf("%s: %v", byEnv(key), err)
	}
}

func (v *validator) positive(key string, d time.Duration) {
	if d <= 0 {
		v.addf("%s must be greater than zero, got %s", byEnv(key), d)
	}
}

func (v *validator) nonNegative(key string, d time.Duration) {
	if d < 0 {
		v.addf("%s must not be negative, got %s", byEnv(key), d)
	}
}

func (v *validator) intRange(key string, n, lo, hi int64) {
	if n < lo || n > hi {
		v.addf("%s must be between %d and %d, got %d", byEnv(key), lo, hi, n)
	}
}

func (v *validator) oneOf(key, got string, allowed ...string) {
	if !slices.Contains(allowed, got) {
		v.addf("%s must be one of %s, got %q", byEnv(key), strings.Join(allowed, "|"), got)
	}
}

// unspecifiedHost reports whether a listen host means "every interface".
func unspecifiedHost(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

func countSet(vs ...string) int {
	n := 0
	for _, v := range vs {
		if v != "" {
			n++
		}
	}
	return n
}

// validRegion: 1..64 of [a-z0-9-], as AWS's region names are; it goes
// into ARNs and signature scopes, so nothing else may.
func validRegion(r string) bool {
	return r != "" && len(r) <= 64 && strings.Trim(r, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}
