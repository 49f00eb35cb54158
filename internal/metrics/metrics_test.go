package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// scrape returns the registry's exposition.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	return string(body)
}

func TestExposition(t *testing.T) {
	m := New()
	m.MessagesProduced.WithLabelValues("orders", "2").Add(3)
	m.OpenPartitionLogs.Set(2)
	body := scrape(t, m)
	for _, want := range []string{
		`narad_messages_produced_total{partition="2",topic="orders"} 3`,
		`narad_open_partition_logs 2`,
		`narad_storage_fsync_duration_seconds_bucket`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	// A second Metrics has its own registry: no duplicate-registration panic.
	New()
}

// Names lists what the registry exports, vectors without series included,
// so a dashboard's names can be checked against it.
func TestNamesMatchTheRegistry(t *testing.T) {
	m := New()
	m.ObserveRaft(fakeRaft{})
	m.ObserveMembers(func() MemberCounts { return MemberCounts{} })
	m.ObserveReplication(func() ReplicationCounts { return ReplicationCounts{} })
	listed := map[string]bool{}
	for _, f := range m.Names() {
		if listed[f.Name] {
			t.Errorf("%s listed twice", f.Name)
		}
		listed[f.Name] = true
	}
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if n := fam.GetName(); strings.HasPrefix(n, "narad_") && !listed[n] {
			t.Errorf("%s is exported but not in Names()", n)
		}
	}
	for _, n := range []string{"narad_http_requests_total", "narad_raft_is_leader", "narad_members", "narad_replicated_partitions", "narad_topics_total"} {
		if !listed[n] {
			t.Errorf("Names() lacks %s", n)
		}
	}
}

type fakeRaft struct{}

func (fakeRaft) IsLeader() bool       { return true }
func (fakeRaft) Term() uint64         { return 4 }
func (fakeRaft) AppliedIndex() uint64 { return 9 }

func TestMembersByState(t *testing.T) {
	m := New()
	m.ObserveMembers(func() MemberCounts { return MemberCounts{Alive: 2, Dead: 1, Draining: 1} })
	body := scrape(t, m)
	for _, want := range []string{`narad_members{state="alive"} 2`, `narad_members{state="dead"} 1`, `narad_members_draining 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

// Every state is exported at every scrape, 0 included, each with its own
// count: an alert on under_replicated or without_leader needs the series
// to exist while the cluster is healthy.
func TestReplicatedPartitionsByState(t *testing.T) {
	m := New()
	m.ObserveReplication(func() ReplicationCounts { return ReplicationCounts{InSync: 3, UnderReplicated: 2} })
	body := scrape(t, m)
	for _, want := range []string{
		`narad_replicated_partitions{state="in_sync"} 3`,
		`narad_replicated_partitions{state="under_replicated"} 2`,
		`narad_replicated_partitions{state="without_leader"} 0`,
		"# TYPE narad_replicated_partitions gauge",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

// The ingress WAL's counters are read at scrape time, so records per
// fdatasync can be computed from two scrapes of a running node.
func TestIngressWALCounters(t *testing.T) {
	m := New()
	m.ObserveIngressWAL(func() WALCounts { return WALCounts{Syncs: 2, Records: 30, Appends: 17} })
	body := scrape(t, m)
	for _, want := range []string{
		"narad_ingress_wal_syncs_total 2",
		"narad_ingress_wal_records_total 30",
		"narad_ingress_wal_appends_total 17",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}
