package metrics

import "github.com/prometheus/client_golang/prometheus"

// The gauges below are read from their source at scrape time, so they are
// never stale.

// RaftSource is what the Raft gauges read.
type RaftSource interface {
	IsLeader() bool
	Term() uint64
	AppliedIndex() uint64
}

// ObserveRaft registers the Raft gauges (a term that jumps is an
// election, or an attack).
func (m *Metrics) ObserveRaft(src RaftSource) {
	f := factory{m}
	f.gaugeFunc("raft_is_leader", "1 when this node leads Raft.", func() float64 {
		if src.IsLeader() {
			return 1
		}
		return 0
	})
	f.gaugeFunc("raft_term", "This node's current Raft term.", func() float64 { return float64(src.Term()) })
	f.gaugeFunc("raft_applied_index", "Last Raft index applied to the FSM.", func() float64 { return float64(src.AppliedIndex()) })
}

// MemberCounts is the cluster's membership as this node's replica sees
// it. A draining member (being decommissioned) is also alive or dead.
type MemberCounts struct {
	Alive, Dead, Draining int
}

// ObserveMembers registers narad_members{state} and
// narad_members_draining, read from count.
func (m *Metrics) ObserveMembers(count func() MemberCounts) {
	f := factory{m}
	f.register(&memberCollector{count: count}, "members", "gauge", []string{"state"})
	f.gaugeFunc("members_draining", "Members being decommissioned (also counted as alive or dead in narad_members).",
		func() float64 { return float64(count().Draining) })
}

// memberCollector exports both states at every scrape, 0 included, so an
// alert on state="dead" always has a series to compare.
type memberCollector struct {
	count func() MemberCounts
}

var membersDesc = prometheus.NewDesc(name("members"),
	"Cluster members by state (alive or dead), as this node's replica sees them; a single node counts itself.",
	[]string{"state"}, nil)

func (c *memberCollector) Describe(ch chan<- *prometheus.Desc) { ch <- membersDesc }

func (c *memberCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.count()
	ch <- prometheus.MustNewConstMetric(membersDesc, prometheus.GaugeValue, float64(n.Alive), "alive")
	ch <- prometheus.MustNewConstMetric(membersDesc, prometheus.GaugeValue, float64(n.Dead), "dead")
}

// ReplicationCounts is the cluster's replicated partitions by state, as
// this node's metastore replica records them. Each partition is in one
// state: one without a leader is not also counted as under-replicated.
type ReplicationCounts struct {
	InSync, UnderReplicated, WithoutLeader int
}

// ObserveReplication registers narad_replicated_partitions{state}, read
// from count. Every node reads the same records, so every node reports
// the cluster-wide figures (the partition gauges are exported by each
// partition's leader only, and a partition without one exports none).
func (m *Metrics) ObserveReplication(count func() ReplicationCounts) {
	factory{m}.register(&replicationCollector{count: count}, "replicated_partitions", "gauge", []string{"state"})
}

// replicationCollector exports the three states at every scrape, 0
// included, so an alert on state="under_replicated" always has a series
// to compare.
type replicationCollector struct {
	count func() ReplicationCounts
}

var replicatedDesc = prometheus.NewDesc(name("replicated_partitions"),
	"Replicated partitions by state, as this node's metastore replica records them: in_sync (every replica in the in-sync set), "+
		"under_replicated (fewer in-sync replicas than replicas, or a replica on a dead member), without_leader (no leader, a dead one, or one out of its in-sync set).",
	[]string{"state"}, nil)

func (c *replicationCollector) Describe(ch chan<- *prometheus.Desc) { ch <- replicatedDesc }

func (c *replicationCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.count()
	ch <- prometheus.MustNewConstMetric(replicatedDesc, prometheus.GaugeValue, float64(n.InSync), "in_sync")
	ch <- prometheus.MustNewConstMetric(replicatedDesc, prometheus.GaugeValue, float64(n.UnderReplicated), "under_replicated")
	ch <- prometheus.MustNewConstMetric(replicatedDesc, prometheus.GaugeValue, float64(n.WithoutLeader), "without_leader")
}

// WALCounts is the ingress WAL's group-commit counters since it opened.
type WALCounts struct {
	Syncs, Records, Appends uint64
}

// ObserveIngressWAL registers the ingress WAL's group-commit counters, read
// from count at scrape time. narad_ingress_wal_records_total divided by
// narad_ingress_wal_syncs_total is the records one fdatasync carried; with
// narad_storage_fsync_duration_seconds_count (the partition logs'
// fdatasyncs) it gives the fdatasyncs a record cost on its way.
func (m *Metrics) ObserveIngressWAL(count func() WALCounts) {
	f := factory{m}
	f.counterFunc("ingress_wal_syncs_total", "Ingress WAL group commits made durable, one write and one fdatasync each.",
		func() float64 { return float64(count().Syncs) })
	f.counterFunc("ingress_wal_records_total", "Records made durable in the ingress WAL.",
		func() float64 { return float64(count().Records) })
	f.counterFunc("ingress_wal_appends_total", "Produce appends (one per request) made durable in the ingress WAL.",
		func() float64 { return float64(count().Appends) })
}
