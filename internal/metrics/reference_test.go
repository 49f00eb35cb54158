package metrics

import (
	"slices"
	"testing"
)

// reference is the reference broker's metrics as its operations
// documentation lists them, with the labels issues 16 and 29 say its
// dashboards select on. A dashboard built for the reference must keep
// working: every name exists, and carries at least these labels (more
// labels do not break a query that aggregates by these).
var reference = map[string][]string{
	// Traffic.
	"narad_messages_produced_total":       {"topic", "partition"},
	"narad_messages_consumed_total":       {"topic"},
	"narad_bytes_produced_total":          {"topic", "partition"},
	"narad_bytes_consumed_total":          nil,
	"narad_produce_rejections_total":      {"topic", "reason"},
	"narad_consume_wait_seconds":          nil,
	"narad_consume_empty_total":           nil,
	"narad_http_requests_total":           {"method", "route", "status"},
	"narad_http_request_duration_seconds": {"route"},
	"narad_http_requests_in_flight":       nil,
	// Queue health.
	"narad_consumer_lag_messages":                 {"topic", "partition"},
	"narad_oldest_unconsumed_message_age_seconds": {"topic", "partition"},
	"narad_inflight_size":                         {"topic", "partition"},
	"narad_acked_ahead_size":                      {"topic", "partition"},
	"narad_ack_rejected_total":                    nil,
	"narad_ack_extended_total":                    nil,
	"narad_nack_total":                            nil,
	"narad_consumer_corrupt_skipped_total":        nil,
	// Fan-out.
	"narad_fanout_lag_messages":           {"parent", "child", "partition"},
	"narad_fanout_due_lag_seconds":        {"parent", "child", "partition"},
	"narad_fanout_committed_total":        {"parent", "child"},
	"narad_fanout_child_dropped_messages": {"parent", "child"},
	"narad_fanout_batch_records":          nil,
	"narad_fanout_batch_bytes":            nil,
	"narad_remote_link_state":             nil,
	"narad_remote_sent_records_total":     nil,
	"narad_remote_send_errors_total":      {"reason"},
	// Storage.
	"narad_storage_fsync_duration_seconds":                  nil,
	"narad_storage_journal_sync_duration_seconds":           nil,
	"narad_storage_flush_duration_seconds":                  nil,
	"narad_storage_high_watermark_persist_duration_seconds": nil,
	"narad_storage_retention_bytes_deleted_total":           {"reason"},
	"narad_storage_retention_messages_deleted_total":        {"reason"},
	"narad_data_dir_size_bytes":                             nil,
	"narad_data_dir_available_bytes":                        nil,
	"narad_topic_bytes":                                     nil,
	"narad_partition_size_bytes":                            nil,
	"narad_segments":                                        nil,
	"narad_open_partition_logs":                             nil,
	"narad_idle_logs_evicted_total":                         nil,
	"narad_ingress_wal_bytes":                               nil,
	"narad_dispatch_pending_records":                        nil,
	"narad_dispatch_rerouted_total":                         nil,
	// Cluster.
	"narad_topics_total":          nil,
	"narad_partitions_total":      nil,
	"narad_raft_is_leader":        nil,
	"narad_raft_applied_index":    nil,
	"narad_members":               {"state"},
	"narad_moves_in_flight":       nil,
	"narad_errors_total":          {"component", "kind"},
	"narad_boot_duration_seconds": nil,
}

// exact are the label sets issues 16 and 29 name: the reference's, no more.
var exact = []string{"narad_messages_produced_total", "narad_bytes_produced_total", "narad_http_requests_total"}

func TestReferenceMetricsExist(t *testing.T) {
	m := New()
	m.ObserveRaft(fakeRaft{})
	m.ObserveMembers(func() MemberCounts { return MemberCounts{} })
	have := map[string]Family{}
	for _, f := range m.Names() {
		have[f.Name] = f
	}
	for n, labels := range reference {
		f, ok := have[n]
		if !ok {
			t.Errorf("%s: the reference exports it, we do not", n)
			continue
		}
		for _, l := range labels {
			if !slices.Contains(f.Labels, l) {
				t.Errorf("%s has labels %v, lacks the reference's %q", n, f.Labels, l)
			}
		}
		if slices.Contains(exact, n) && len(f.Labels) != len(labels) {
			t.Errorf("%s has labels %v, want exactly %v", n, f.Labels, labels)
		}
	}
}
