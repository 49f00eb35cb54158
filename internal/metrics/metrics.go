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
	families []Family   // every narad_ family, in registration order (Names)
	vecs     []labelled // the vectors, for deleting a topic's series (topics.go)

	// Traffic.
	MessagesProduced   *PartitionCounters // topic, partition
	MessagesConsumed   *PartitionCounters // topic, partition
	BytesProduced      *PartitionCounters // topic, partition
	BytesConsumed      prometheus.Counter
	ProduceRejections  *prometheus.CounterVec // topic, reason
	Deduplicated       *prometheus.CounterVec // topic
	DedupeForgotten    *prometheus.CounterVec // topic
	ConsumeWait        prometheus.Histogram
	ConsumeEmpty       prometheus.Counter
	ConsumeRemoteWakes prometheus.Counter
	ConsumeParked      prometheus.Gauge
	AuthFailures       prometheus.Counter
	RateLimited        *prometheus.CounterVec // user, limit
	ClusterRefused     *prometheus.CounterVec // plane, reason
	MovesInFlight      prometheus.Gauge
	MovesCompleted     prometheus.Counter
	ReplicaHeals       prometheus.Counter
	HTTPRequests       *prometheus.CounterVec   // method, route (method and pattern), status
	HTTPDuration       *prometheus.HistogramVec // method, route
	HTTPInFlight       prometheus.Gauge
	AWSRequests        *prometheus.CounterVec   // service, action, code
	AWSDuration        *prometheus.HistogramVec // service, action
	ConsumerLag        *prometheus.GaugeVec     // topic, partition
	Scheduled          *prometheus.GaugeVec     // topic
	OldestUnconsumed   *prometheus.GaugeVec     // topic, partition
	InflightMessages   *prometheus.GaugeVec     // topic, partition
	AckedAheadMessages *prometheus.GaugeVec     // topic, partition
	AckRejected        prometheus.Counter
	AckExtended        prometheus.Counter
	Nacks              prometheus.Counter
	// DeadLettered counts records committed to a dead-letter topic and
	// settled on their source topic (topic: the source).
	DeadLettered          *prometheus.CounterVec
	PurgedMessages        *prometheus.CounterVec // topic
	CountsRestored        prometheus.Counter
	CorruptSkipped        prometheus.Counter
	FanoutLag             *prometheus.GaugeVec // parent, child, partition
	FanoutDueLag          *prometheus.GaugeVec // parent, child, partition
	FanoutCommitted       *prometheus.CounterVec
	FanoutDropped         *prometheus.CounterVec // parent, child
	FanoutFiltered        *prometheus.CounterVec // parent, child
	FanoutEnvelopeSkipped *prometheus.CounterVec // parent, child
	FanoutBatchRecords    prometheus.Histogram
	FanoutBatchBytes      prometheus.Histogram
	FanoutDeferred        prometheus.Counter
	RemoteLinkState       *prometheus.GaugeVec   // parent, child, state
	RemoteSent            prometheus.Counter     // records a remote target acknowledged
	RemoteErrors          *prometheus.CounterVec // reason (the link state it caused)

	// ReplicaCutOffElections counts the leaderships this node, as
	// controller, moved off a leader a majority of copies reported
	// unreachable (package cluster).
	ReplicaCutOffElections prometheus.Counter

	// Storage.
	FsyncDuration       prometheus.Histogram
	JournalSyncDuration prometheus.Histogram
	FlushDuration       prometheus.Histogram
	HWMPersistDuration  prometheus.Histogram
	RetentionBytes      *prometheus.CounterVec // reason
	RetentionMessages   *prometheus.CounterVec // reason
	OpenPartitionLogs   prometheus.Gauge
	DataDirSize         prometheus.Gauge
	DataDirAvailable    prometheus.Gauge
	TopicBytes          *prometheus.GaugeVec // topic
	PartitionSize       *prometheus.GaugeVec // topic, partition
	Segments            *prometheus.GaugeVec // topic, partition
	IdleLogsEvicted     prometheus.Counter
	RecoveryShortfalls  prometheus.Counter
	IngressWALBytes     prometheus.Gauge
	IngressWALFenced    prometheus.Gauge
	DataDiskFull        prometheus.Gauge
	DispatchPending     prometheus.Gauge
	DispatchRerouted    prometheus.Counter
	DispatchDiscarded   prometheus.Counter
	DispatchKept        prometheus.Counter

	// Replicated partitions (docs/replication.md): on the leader, the
	// in-sync set's size and how far the slowest follower trails; on
	// every node, how often it took a partition's leadership.
	ReplicasInSync        *prometheus.GaugeVec   // topic, partition
	LeaderChanges         *prometheus.CounterVec // topic, partition
	ReplicationLagRecords *prometheus.GaugeVec   // topic, partition
	ReplicationLagSeconds *prometheus.GaugeVec   // topic, partition
	CommitStallSeconds    *prometheus.GaugeVec   // topic, partition
	CommitStalls          *prometheus.CounterVec // topic, partition
	ReplicaAppendFailures *prometheus.CounterVec // topic, partition, reason

	// Cluster.
	Topics       prometheus.Gauge
	Partitions   prometheus.Gauge
	Errors       *prometheus.CounterVec // component, kind
	BootDuration prometheus.Gauge
}

var (
	latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	sizeBuckets    = prometheus.ExponentialBuckets(1, 4, 12)
)

// New creates and registers every metric. Where the reference broker's
// name breaks the Prometheus naming rules (a gauge ending in _total, a
// unitless _size, a counter without _total), the series is exported under
// the conventional name and, for dashboards built for the reference, under
// the reference's name too (alias.go).
func New() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{Registry: r}
	f := factory{m}
	// Traffic.
	m.MessagesProduced = f.partitionCounters("messages_produced_total", "Records accepted by produce, by the partition they were given.")
	m.MessagesConsumed = f.partitionCounters("messages_consumed_total", "Records delivered by queue consume (a redelivery counts again).")
	m.BytesProduced = f.partitionCounters("bytes_produced_total", "Payload bytes accepted by produce, by the partition they were given.")
	m.BytesConsumed = f.counter("bytes_consumed_total", "Payload bytes delivered by consume.")
	m.ProduceRejections = f.counterVec("produce_rejections_total", "Produce requests refused.", "topic", "reason")
	m.Deduplicated = f.counterVec("deduplicated_records_total",
		"Records not stored because their msg_id was stored within the topic's dedupe window (each produce still answered 202).", "topic")
	m.DedupeForgotten = f.counterVec("dedupe_forgotten_ids_total",
		"Msg ids a partition forgot before their dedupe window ended, because it remembered its cap of ids (a retry of one would be stored again).", "topic")
	m.ConsumeWait = f.histogram("consume_wait_seconds", "Time consume requests spent long-polling.", latencyBuckets)
	m.ConsumeEmpty = f.counter("consume_empty_total", "Consume requests answered 204.")
	m.ConsumeRemoteWakes = f.counter("consume_remote_wakes_total",
		"Unpinned long-polls woken by a commit, expiry or nack on another node.")
	m.ConsumeParked = f.gauge("consume_parked",
		"Unpinned consumes parked here right now, waiting on this node and the other owners.")
	m.AuthFailures = f.counter("auth_failures_total", "Requests refused for missing or wrong credentials.")
	m.RateLimited = f.counterVec("rate_limited_requests_total",
		`Requests refused with 429 by a user's rate limit on this node, by user ("anonymous" with security off) and limit (produce_records_per_s, produce_bytes_per_s, consume_requests_per_s). A user's series go when the user is deleted.`,
		"user", "limit")
	m.HTTPRequests = f.counterVec("http_requests_total",
		`HTTP requests by method, route (the route's pattern, its method first: "GET /v1/topics/{topic}"; "unmatched" when no route matched) and status.`,
		"method", "route", "status")
	m.HTTPDuration = f.histogramVec("http_request_duration_seconds", "HTTP request latency by method and route.",
		latencyBuckets, "method", "route")
	m.HTTPInFlight = f.gauge("http_requests_in_flight", "HTTP requests being served.")
	m.AWSRequests = f.counterVec("aws_requests_total",
		`SQS and SNS requests by service (sqs, sns), action ("unknown" for one neither has) and code ("ok", or the AWS error code answered).`,
		"service", "action", "code")
	m.AWSDuration = f.histogramVec("aws_request_duration_seconds", "SQS and SNS request latency by service and action.",
		latencyBuckets, "service", "action")

	// Queue health.
	m.ConsumerLag = f.gaugeVec("consumer_lag_messages", "High watermark minus consumer frontier.", "topic", "partition")
	m.Scheduled = f.gaugeVec("scheduled_messages", "Records scheduled for later and not due yet, in the partitions whose queues this node has loaded.", "topic")
	m.OldestUnconsumed = f.gaugeVec("oldest_unconsumed_message_age_seconds", "Age of the record at the consumer frontier.", "topic", "partition")
	m.InflightMessages = f.gaugeVec("inflight_messages", "Leases out on a partition.", "topic", "partition")
	f.alias(m.InflightMessages, "inflight_size")
	m.AckedAheadMessages = f.gaugeVec("acked_ahead_messages", "Acks above a gap waiting for the frontier.", "topic", "partition")
	f.alias(m.AckedAheadMessages, "acked_ahead_size")
	m.ReplicasInSync = f.gaugeVec("partition_replicas_in_sync", "Replicas in a replicated partition's in-sync set, as its leader sees it (exported by the leader).", "topic", "partition")
	m.LeaderChanges = f.counterVec("partition_leader_changes_total", "Times this node became ready as a replicated partition's leader.", "topic", "partition")
	m.ReplicationLagRecords = f.gaugeVec("partition_replication_lag_records", "Records the slowest follower of a replicated partition lacks, on its leader.", "topic", "partition")
	m.ReplicationLagSeconds = f.gaugeVec("partition_replication_lag_seconds", "Seconds since the slowest follower of a replicated partition last held its leader's end (0: caught up), on its leader.", "topic", "partition")
	m.CommitStallSeconds = f.gaugeVec("partition_commit_stall_seconds", "Seconds a replicated partition's leader has had records waiting without its committed point moving, once past the lag bound (0: not stalled), on its leader.", "topic", "partition")
	m.CommitStalls = f.counterVec("partition_commit_stalls_total", "Times a replicated partition's leader on this node stalled: records waited past the lag bound without the committed point moving.", "topic", "partition")
	m.ReplicaAppendFailures = f.counterVec("replica_append_failures_total",
		"Fetched answers a follower of a replicated partition on this node could not append to its copy, by reason: mismatch (the records do not continue the copy's log), "+
			"fenced (the log is fenced after an I/O error), epoch_mark (replica.state could not be written), other. The follower fetches them again after a backoff and logs the first failure, then at most one line a minute.",
		"topic", "partition", "reason")
	m.AckRejected = f.counter("ack_rejected_total", "Acks, extends and nacks answered 410.")
	m.AckExtended = f.counter("ack_extended_total", "Leases extended.")
	m.Nacks = f.counter("nack_total", "Leases released by nack.")
	m.DeadLettered = f.counterVec("dead_lettered_messages_total", "Records committed to their topic's dead-letter topic, then settled there (topic: the source).", "topic")
	m.PurgedMessages = f.counterVec("purged_messages_total", "Unsettled records settled by a topic purge, by topic.", "topic")
	m.CountsRestored = f.counter("delivery_counts_restored_total", "Delivery counts of unsettled records loaded from a partition's counts file (a restart or a move).")
	m.CorruptSkipped = f.counter("consumer_corrupt_skipped_total", "Unreadable records skipped by readers (recorded loss).")

	// Fan-out.
	m.FanoutLag = f.gaugeVec("fanout_lag_messages", "Parent high watermark minus fan-out cursor.", "parent", "child", "partition")
	m.FanoutDueLag = f.gaugeVec("fanout_due_lag_seconds", "How far a delay cursor runs behind the due frontier.", "parent", "child", "partition")
	m.FanoutCommitted = f.counterVec("fanout_committed_total", "Records committed into children.", "parent", "child")
	m.FanoutDropped = f.counterVec("fanout_child_dropped_messages_total",
		"Records a cursor skipped because retention deleted them first (data loss for that child).", "parent", "child")
	f.alias(m.FanoutDropped, "fanout_child_dropped_messages")
	m.FanoutFiltered = f.counterVec("fanout_filtered_messages_total",
		"Records a filtered link's cursor stepped over because its filter does not match them (not copied, by design).", "parent", "child")
	m.FanoutEnvelopeSkipped = f.counterVec("fanout_envelope_skipped_total",
		"Records an enveloped link copied raw because their envelope would exceed the 1 MiB record cap.", "parent", "child")
	m.FanoutBatchRecords = f.histogram("fanout_batch_records", "Records per fan-out slab.", sizeBuckets)
	m.FanoutBatchBytes = f.histogram("fanout_batch_bytes", "Bytes per fan-out slab.", prometheus.ExponentialBuckets(64, 4, 12))
	m.FanoutDeferred = f.counter("fanout_anchor_deferred_total",
		"Cursor anchors put off because the leader did not confirm the link's epoch is current.")
	m.RemoteLinkState = f.gaugeVec("remote_link_state",
		"1 on a remote child's current state on this node (running, retrying, target_missing, auth_failed, rejected).",
		"parent", "child", "state")
	m.RemoteSent = f.counter("remote_sent_records_total", "Records a remote child's target acknowledged.")
	m.RemoteErrors = f.counterVec("remote_send_errors_total", "Failed batch sends to remote children, by the state they caused.", "reason")

	// Storage.
	m.FsyncDuration = f.histogram("storage_fsync_duration_seconds", "Partition log fdatasync latency.", latencyBuckets)
	m.JournalSyncDuration = f.histogram("storage_journal_sync_duration_seconds", "Journal fdatasync latency: one makes the writes of every replicated partition's copy on this node durable that arrived meanwhile.", latencyBuckets)
	m.FlushDuration = f.histogram("storage_flush_duration_seconds", "Partition log write latency: committed frames written to the segment file, before the fdatasync.", latencyBuckets)
	m.HWMPersistDuration = f.histogram("storage_high_watermark_persist_duration_seconds", "hwm file write latency.", latencyBuckets)
	m.RetentionBytes = f.counterVec("storage_retention_bytes_deleted_total", "Bytes deleted by retention.", "reason")
	m.RetentionMessages = f.counterVec("storage_retention_messages_deleted_total", "Records deleted by retention.", "reason")
	m.OpenPartitionLogs = f.gauge("open_partition_logs", "Partition logs open on this node.")
	m.DataDirSize = f.gauge("data_dir_size_bytes", "Bytes under the data directory.")
	m.DataDirAvailable = f.gauge("data_dir_available_bytes", "Bytes available to the data directory's file system.")
	m.TopicBytes = f.gaugeVec("topic_bytes", "Bytes of a topic's partition logs on this node (as last seen open).", "topic")
	m.PartitionSize = f.gaugeVec("partition_size_bytes", "Bytes of a partition log (as last seen open).", "topic", "partition")
	m.Segments = f.gaugeVec("segments", "Segment files of a partition log (as last seen open).", "topic", "partition")
	m.IdleLogsEvicted = f.counter("idle_logs_evicted_total", "Partition logs closed for idleness.")
	m.RecoveryShortfalls = f.counter("storage_recovery_shortfalls_total",
		"Partition log recoveries that found fewer records than the hwm file says were published (acknowledged data lost to damage or removal; the log names the file and offsets).")
	m.IngressWALBytes = f.gauge("ingress_wal_bytes", "Bytes in the ingress write-ahead log.")
	m.IngressWALFenced = f.gauge("ingress_wal_fenced", "1 while the ingress WAL refuses appends after a failed fdatasync or write, until it has re-read its tail from disk.")
	m.DataDiskFull = f.gauge("data_disk_full", "1 while the data disk's reserve is released: produce and topic create are refused.")
	m.DispatchPending = f.gauge("dispatch_pending_records", "WAL records accepted but not yet committed to a partition.")
	m.DispatchRerouted = f.counter("dispatch_rerouted_total", "WAL records committed to a sibling partition.")
	m.DispatchDiscarded = f.counter("dispatch_discarded_total", "WAL records dropped because the leader confirmed their topic is gone.")
	m.DispatchKept = f.counter("dispatch_discard_deferred_total",
		"Passes that kept WAL records of a topic unknown here, its absence not confirmed.")

	// Cluster.
	m.ClusterRefused = f.counterVec("cluster_connections_refused_total",
		"Connections to a cluster port (raft, rpc) closed because they did not prove they belong to the cluster.", "plane", "reason")
	m.MovesInFlight = f.gauge("moves_in_flight", "Partition moves in flight (assignments with a target), as this node's replica sees them.")
	m.MovesCompleted = f.counter("moves_completed_total",
		"Partition moves this node completed as the destination (copied, verified, installed, flipped).")
	m.ReplicaHeals = f.counter("replica_heals_total",
		"Copies of replicated partitions this node, as controller, began to re-create elsewhere because their node was silent past replication.heal_after_ms.")
	m.ReplicaCutOffElections = f.counter("replica_cut_off_elections_total",
		"Leaderships of replicated partitions this node, as controller, moved because a majority of the partition's copies reported the leader unreachable.")
	m.Topics = f.gauge("topics", "Topics in the metastore.")
	f.alias(m.Topics, "topics_total")
	m.Partitions = f.gauge("partitions", "Partitions of all topics in the metastore.")
	f.alias(m.Partitions, "partitions_total")
	m.Errors = f.counterVec("errors_total", "Internal errors by component and kind.", "component", "kind")
	m.BootDuration = f.gauge("boot_duration_seconds", "Seconds from start to ready.")

	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}
