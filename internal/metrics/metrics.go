package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the node's set of series, on its own registry.
type Metrics struct {
	Registry *prometheus.Registry

	// Traffic.
	MessagesProduced   *prometheus.CounterVec // topic
	MessagesConsumed   *prometheus.CounterVec // topic
	BytesProduced      prometheus.Counter
	BytesConsumed      prometheus.Counter
	ProduceRejections  *prometheus.CounterVec // topic, reason
	ConsumeWait        prometheus.Histogram
	ConsumeEmpty       prometheus.Counter
	ConsumeRemoteWakes prometheus.Counter
	ConsumeParked      prometheus.Gauge
	AuthFailures       prometheus.Counter
	ClusterRefused     *prometheus.CounterVec // plane, reason
	MovesInFlight      prometheus.Gauge
	MovesCompleted     prometheus.Counter
	HTTPRequests       *prometheus.CounterVec // route, code
	HTTPDuration       *prometheus.HistogramVec
	HTTPInFlight       prometheus.Gauge
	ConsumerLag        *prometheus.GaugeVec // topic, partition
	OldestUnconsumed   *prometheus.GaugeVec // topic, partition
	InflightSize       *prometheus.GaugeVec // topic, partition
	AckedAheadSize     *prometheus.GaugeVec // topic, partition
	AckRejected        prometheus.Counter
	AckExtended        prometheus.Counter
	Nacks              prometheus.Counter
	CorruptSkipped     prometheus.Counter
	FanoutLag          *prometheus.GaugeVec // parent, child, partition
	FanoutDueLag       *prometheus.GaugeVec // parent, child, partition
	FanoutCommitted    *prometheus.CounterVec
	FanoutDropped      *prometheus.CounterVec // parent, child
	FanoutBatchRecords prometheus.Histogram
	FanoutBatchBytes   prometheus.Histogram
	FanoutDeferred     prometheus.Counter
	RemoteLinkState    *prometheus.GaugeVec   // parent, child, state
	RemoteSent         prometheus.Counter     // records a remote target acknowledged
	RemoteErrors       *prometheus.CounterVec // reason (the link state it caused)

	// Storage.
	FsyncDuration      prometheus.Histogram
	HWMPersistDuration prometheus.Histogram
	RetentionBytes     *prometheus.CounterVec // reason
	RetentionMessages  *prometheus.CounterVec // reason
	OpenPartitionLogs  prometheus.Gauge
	DataDirSize        prometheus.Gauge
	DataDirAvailable   prometheus.Gauge
	TopicBytes         *prometheus.GaugeVec // topic
	PartitionSize      *prometheus.GaugeVec // topic, partition
	Segments           *prometheus.GaugeVec // topic, partition
	IdleLogsEvicted    prometheus.Counter
	RecoveryShortfalls prometheus.Counter
	IngressWALBytes    prometheus.Gauge
	IngressWALFenced   prometheus.Gauge
	DataDiskFull       prometheus.Gauge
	DispatchPending    prometheus.Gauge
	DispatchRerouted   prometheus.Counter
	DispatchDiscarded  prometheus.Counter
	DispatchKept       prometheus.Counter

	// Cluster.
	TopicsTotal     prometheus.Gauge
	PartitionsTotal prometheus.Gauge
	Errors          *prometheus.CounterVec // component, kind
	BootDuration    prometheus.Gauge
}

var (
	latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	sizeBuckets    = prometheus.ExponentialBuckets(1, 4, 12)
)

// New creates and registers every metric.
func New() *Metrics {
	r := prometheus.NewRegistry()
	f := factory{r}
	m := &Metrics{
		Registry:          r,
		MessagesProduced:  f.counterVec("messages_produced_total", "Records accepted by produce.", "topic"),
		MessagesConsumed:  f.counterVec("messages_consumed_total", "Records delivered by queue consume.", "topic"),
		BytesProduced:     f.counter("bytes_produced_total", "Payload bytes accepted by produce."),
		BytesConsumed:     f.counter("bytes_consumed_total", "Payload bytes delivered by consume."),
		ProduceRejections: f.counterVec("produce_rejections_total", "Produce requests refused.", "topic", "reason"),
		ConsumeWait:       f.histogram("consume_wait_seconds", "Time consume requests spent long-polling.", latencyBuckets),
		ConsumeEmpty:      f.counter("consume_empty_total", "Consume requests answered 204."),
		ConsumeRemoteWakes: f.counter("consume_remote_wakes_total",
			"Unpinned long-polls woken by a commit, expiry or nack on another node."),
		AuthFailures: f.counter("auth_failures_total", "Requests refused for missing or wrong credentials."),
		ClusterRefused: f.counterVec("cluster_connections_refused_total",
			"Connections to a cluster port (raft, rpc) closed because they did not prove they belong to the cluster.", "plane", "reason"),
		MovesInFlight: f.gauge("moves_in_flight", "Partition moves in flight (assignments with a target), as this node's replica sees them."),
		MovesCompleted: f.counter("moves_completed_total",
			"Partition moves this node completed as the destination (copied, verified, installed, flipped)."),
		ConsumeParked: f.gauge("consume_parked",
			"Unpinned consumes parked here right now, waiting on this node and the other owners."),
		HTTPRequests: f.counterVec("http_requests_total", "HTTP requests by route and status.", "route", "code"),
		HTTPDuration: f.histogramVec("http_request_duration_seconds", "HTTP request latency by route.",
			latencyBuckets, "route"),
		HTTPInFlight:     f.gauge("http_requests_in_flight", "HTTP requests being served."),
		ConsumerLag:      f.gaugeVec("consumer_lag_messages", "High watermark minus consumer frontier.", "topic", "partition"),
		OldestUnconsumed: f.gaugeVec("oldest_unconsumed_message_age_seconds", "Age of the record at the consumer frontier.", "topic", "partition"),
		InflightSize:     f.gaugeVec("inflight_size", "Leases out on a partition.", "topic", "partition"),
		AckedAheadSize:   f.gaugeVec("acked_ahead_size", "Acks above a gap waiting for the frontier.", "topic", "partition"),
		AckRejected:      f.counter("ack_rejected_total", "Acks, extends and nacks answered 410."),
		AckExtended:      f.counter("ack_extended_total", "Leases extended."),
		Nacks:            f.counter("nack_total", "Leases released by nack."),
		CorruptSkipped:   f.counter("consumer_corrupt_skipped_total", "Unreadable records skipped by readers (recorded loss)."),
		FanoutLag:        f.gaugeVec("fanout_lag_messages", "Parent high watermark minus fan-out cursor.", "parent", "child", "partition"),
		FanoutDueLag:     f.gaugeVec("fanout_due_lag_seconds", "How far a delay cursor runs behind the due frontier.", "parent", "child", "partition"),
		FanoutCommitted:  f.counterVec("fanout_committed_total", "Records committed into children.", "parent", "child"),
		FanoutDropped:    f.counterVec("fanout_child_dropped_messages", "Records a cursor skipped because retention deleted them first.", "parent", "child"),
		FanoutBatchRecords: f.histogram("fanout_batch_records", "Records per fan-out slab.",
			sizeBuckets),
		FanoutBatchBytes: f.histogram("fanout_batch_bytes", "Bytes per fan-out slab.",
			prometheus.ExponentialBuckets(64, 4, 12)),
		RemoteLinkState: f.gaugeVec("remote_link_state", "1 on a remote child's current state on this node (running, retrying, target_missing, auth_failed, rejected).",
			"parent", "child", "state"),
		RemoteSent:   f.counter("remote_sent_records_total", "Records a remote child's target acknowledged."),
		RemoteErrors: f.counterVec("remote_send_errors_total", "Failed batch sends to remote children, by the state they caused.", "reason"),
		FanoutDeferred: f.counter("fanout_anchor_deferred_total",
			"Cursor anchors put off because the leader did not confirm the link's epoch is current."),
		FsyncDuration:      f.histogram("storage_fsync_duration_seconds", "Partition log fdatasync latency.", latencyBuckets),
		HWMPersistDuration: f.histogram("storage_high_watermark_persist_duration_seconds", "hwm file write latency.", latencyBuckets),
		RetentionBytes:     f.counterVec("storage_retention_bytes_deleted_total", "Bytes deleted by retention.", "reason"),
		RetentionMessages:  f.counterVec("storage_retention_messages_deleted_total", "Records deleted by retention.", "reason"),
		OpenPartitionLogs:  f.gauge("open_partition_logs", "Partition logs open on this node."),
		DataDirSize:        f.gauge("data_dir_size_bytes", "Bytes under the data directory."),
		DataDirAvailable:   f.gauge("data_dir_available_bytes", "Bytes available to the data directory's file system."),
		TopicBytes:         f.gaugeVec("topic_bytes", "Bytes of a topic's partition logs on this node (as last seen open).", "topic"),
		PartitionSize:      f.gaugeVec("partition_size_bytes", "Bytes of a partition log (as last seen open).", "topic", "partition"),
		Segments:           f.gaugeVec("segments", "Segment files of a partition log (as last seen open).", "topic", "partition"),
		IdleLogsEvicted:    f.counter("idle_logs_evicted_total", "Partition logs closed for idleness."),
		RecoveryShortfalls: f.counter("storage_recovery_shortfalls_total",
			"Partition log recoveries that found fewer records than the hwm file says were published (acknowledged data lost to damage or removal; the log names the file and offsets)."),
		IngressWALBytes:   f.gauge("ingress_wal_bytes", "Bytes in the ingress write-ahead log."),
		IngressWALFenced:  f.gauge("ingress_wal_fenced", "1 while the ingress WAL refuses appends after a failed fdatasync or write, until it has re-read its tail from disk."),
		DataDiskFull:      f.gauge("data_disk_full", "1 while the data disk's reserve is released: produce and topic create are refused."),
		DispatchPending:   f.gauge("dispatch_pending_records", "WAL records accepted but not yet committed to a partition."),
		DispatchRerouted:  f.counter("dispatch_rerouted_total", "WAL records committed to a sibling partition."),
		DispatchDiscarded: f.counter("dispatch_discarded_total", "WAL records dropped because the leader confirmed their topic is gone."),
		DispatchKept: f.counter("dispatch_discard_deferred_total",
			"Passes that kept WAL records of a topic unknown here, its absence not confirmed."),
		TopicsTotal:     f.gauge("topics_total", "Topics in the metastore."),
		PartitionsTotal: f.gauge("partitions_total", "Partitions in the metastore."),
		Errors:          f.counterVec("errors_total", "Internal errors by component and kind.", "component", "kind"),
		BootDuration:    f.gauge("boot_duration_seconds", "Seconds from start to ready."),
	}
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// RaftSource is what the Raft gauges read.
type RaftSource interface {
	IsLeader() bool
	Term() uint64
	AppliedIndex() uint64
}

// ObserveRaft registers the Raft gauges, read from src at scrape time so
// they are never stale (a term that jumps is an election, or an attack).
func (m *Metrics) ObserveRaft(src RaftSource) {
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name("raft_is_leader"), Help: "1 when this node leads Raft."},
			func() float64 {
				if src.IsLeader() {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name("raft_term"), Help: "This node's current Raft term."},
			func() float64 { return float64(src.Term()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name("raft_applied_index"), Help: "Last Raft index applied to the FSM."},
			func() float64 { return float64(src.AppliedIndex()) }),
	)
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

type factory struct{ r *prometheus.Registry }

func name(n string) string { return "narad_" + n }

func (f factory) counter(n, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name(n), Help: help})
	f.r.MustRegister(c)
	return c
}

func (f factory) counterVec(n, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name(n), Help: help}, labels)
	f.r.MustRegister(c)
	return c
}

func (f factory) gauge(n, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name(n), Help: help})
	f.r.MustRegister(g)
	return g
}

func (f factory) gaugeVec(n, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name(n), Help: help}, labels)
	f.r.MustRegister(g)
	return g
}

func (f factory) histogram(n, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name(n), Help: help, Buckets: buckets})
	f.r.MustRegister(h)
	return h
}

func (f factory) histogramVec(n, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name(n), Help: help, Buckets: buckets}, labels)
	f.r.MustRegister(h)
	return h
}
