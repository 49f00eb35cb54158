package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/metrics"
)

func dashboardFile(t *testing.T) string {
	return filepath.Join(root(t), "deploy", "grafana", "narad.json")
}

func rulesFile(t *testing.T) string {
	return filepath.Join(root(t), "deploy", "prometheus", "narad-rules.yml")
}

// targetLabels are the labels Prometheus attaches to every scraped series.
var targetLabels = []string{"job", "instance"}

// family is what an expression may select: a series name and its labels.
type family struct {
	labels  []string
	aliasOf string // the conventional name, for a deprecated reference name
}

type fakeRaft struct{}

func (fakeRaft) IsLeader() bool       { return true }
func (fakeRaft) Term() uint64         { return 1 }
func (fakeRaft) AppliedIndex() uint64 { return 1 }

// registry is every series name a node exports: metrics.Names (with the
// Raft, member and replicated-partition gauges the server registers at
// start), a histogram's _bucket, _sum and _count, the Go client's go_ and
// process_ families, and Prometheus's own up.
func registry(t *testing.T) map[string]family {
	t.Helper()
	m := metrics.New()
	m.ObserveRaft(fakeRaft{})
	m.ObserveMembers(func() metrics.MemberCounts { return metrics.MemberCounts{Alive: 1} })
	m.ObserveReplication(func() metrics.ReplicationCounts { return metrics.ReplicationCounts{} })
	known := map[string]family{"up": {}}
	for _, f := range m.Names() {
		fam := family{labels: f.Labels, aliasOf: f.AliasOf}
		if f.Type != "histogram" {
			known[f.Name] = fam
			continue
		}
		known[f.Name+"_bucket"] = family{labels: append(slices.Clone(f.Labels), "le"), aliasOf: f.AliasOf}
		known[f.Name+"_sum"] = fam
		known[f.Name+"_count"] = fam
	}
	got, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range got {
		if n := mf.GetName(); !strings.HasPrefix(n, "narad_") {
			var labels []string
			for _, s := range mf.GetMetric() {
				for _, l := range s.GetLabel() {
					labels = append(labels, l.GetName())
				}
			}
			known[n] = family{labels: labels}
		}
	}
	return known
}

// unknown lists what in lines the registry does not export: a metric that
// does not exist, a deprecated alias, a label the metric lacks, an
// expression that selects nothing.
func unknown(lines []line, known map[string]family) []string {
	var bad []string
	for _, l := range lines {
		if len(l.Selectors) == 0 {
			bad = append(bad, fmt.Sprintf("%s: %q selects no metric", l.Where, l.Expr))
		}
		for _, s := range l.Selectors {
			f, ok := known[s.Name]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%s: metric %s does not exist", l.Where, s.Name))
				continue
			case f.aliasOf != "":
				bad = append(bad, fmt.Sprintf("%s: %s is the reference's deprecated name; use %s", l.Where, s.Name, f.aliasOf))
			}
			for _, lb := range s.Labels {
				if !slices.Contains(f.labels, lb) && !slices.Contains(targetLabels, lb) {
					bad = append(bad, fmt.Sprintf("%s: %s has no label %q (it has %v)", l.Where, s.Name, lb, f.labels))
				}
			}
		}
	}
	return bad
}

// selected is every metric name the lines select.
func selected(lines []line) map[string]bool {
	out := map[string]bool{}
	for _, l := range lines {
		for _, s := range l.Selectors {
			out[s.Name] = true
		}
	}
	return out
}

// The dashboard's queries parse and name metrics and labels that exist,
// and it shows each signal issue 11 asks for, issue 13's queue features
// and issue 29's replication signals.
func TestDashboardNamesOnlyRegisteredMetrics(t *testing.T) {
	lines, complaints, err := check(t, "", dashboardFile(t))
	if err != nil {
		t.Fatalf("promcheck refused the dashboard: %v\n%s", err, complaints)
	}
	for _, b := range unknown(lines, registry(t)) {
		t.Error(b)
	}
	names := selected(lines)
	for signal, metric := range map[string]string{
		"produce rate":           "narad_messages_produced_total",
		"consume rate":           "narad_messages_consumed_total",
		"backlog":                "narad_consumer_lag_messages",
		"oldest-unconsumed age":  "narad_oldest_unconsumed_message_age_seconds",
		"fan-out lag":            "narad_fanout_lag_messages",
		"due lag":                "narad_fanout_due_lag_seconds",
		"dropped messages":       "narad_fanout_child_dropped_messages_total",
		"fsync latency":          "narad_storage_fsync_duration_seconds_bucket",
		"Raft state":             "narad_raft_is_leader",
		"fenced ingress WAL":     "narad_ingress_wal_fenced",
		"members by state":       "narad_members",
		"HTTP requests by route": "narad_http_requests_total",
		// The queue features of issue 13.
		"deduplicated records":     "narad_deduplicated_records_total",
		"dedupe ids forgotten":     "narad_dedupe_forgotten_ids_total",
		"dead-lettered records":    "narad_dead_lettered_messages_total",
		"purged records":           "narad_purged_messages_total",
		"rate-limited requests":    "narad_rate_limited_requests_total",
		"delivery counts restored": "narad_delivery_counts_restored_total",
		// Replication, issue 29.
		"replicated partitions by state": "narad_replicated_partitions",
		"in-sync replicas":               "narad_partition_replicas_in_sync",
		"replication lag (seconds)":      "narad_partition_replication_lag_seconds",
		"replication lag (records)":      "narad_partition_replication_lag_records",
		"commit stall":                   "narad_partition_commit_stall_seconds",
		"leader changes":                 "narad_partition_leader_changes_total",
		"follower append failures":       "narad_replica_append_failures_total",
		"fenced partition logs":          "narad_errors_total",
	} {
		if !names[metric] {
			t.Errorf("the dashboard shows no %s (%s)", signal, metric)
		}
	}
}

// The alerting rules parse and validate (groups, durations, PromQL,
// templates), name metrics and labels that exist, and alert on the lag,
// drop-behind, dead-node, fenced-WAL and replication signals.
func TestAlertingRulesParseAndNameRegisteredMetrics(t *testing.T) {
	if promtool, err := exec.LookPath("promtool"); err == nil {
		out, err := exec.Command(promtool, "check", "rules", rulesFile(t)).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check rules: %v\n%s", err, out)
		}
	} else {
		t.Log("no promtool on PATH (Debian: apt-get install prometheus); checking with Prometheus's rule parser only")
	}
	lines, complaints, err := check(t, rulesFile(t), "")
	if err != nil {
		t.Fatalf("promcheck refused the rules: %v\n%s", err, complaints)
	}
	for _, b := range unknown(lines, registry(t)) {
		t.Error(b)
	}
	names := selected(lines)
	for signal, metric := range map[string]string{
		"fan-out lag": "narad_fanout_lag_messages",
		"due lag":     "narad_fanout_due_lag_seconds",
		"drop-behind": "narad_fanout_child_dropped_messages_total",
		"dead member": "narad_members",
		"node down":   "up",
		"fenced WAL":  "narad_ingress_wal_fenced",
		"backlog age": "narad_oldest_unconsumed_message_age_seconds",
		"Raft leader": "narad_raft_is_leader",
		"disk full":   "narad_data_disk_full",
		// Replication, issue 29.
		"under-replicated partitions": "narad_replicated_partitions",
		"commit stall":                "narad_partition_commit_stall_seconds",
		"replication lag":             "narad_partition_replication_lag_seconds",
		"leader churn":                "narad_partition_leader_changes_total",
		"follower append failures":    "narad_replica_append_failures_total",
		"fenced partition logs":       "narad_errors_total",
	} {
		if !names[metric] {
			t.Errorf("no alerting rule on %s (%s)", signal, metric)
		}
	}
}

// The checks are not vacuous: a dashboard that names a metric that does
// not exist, a deprecated alias or a label the metric lacks is reported,
// and a rules file with broken PromQL is refused.
func TestChecksRefuseWhatDoesNotExist(t *testing.T) {
	dir := t.TempDir()
	dash := filepath.Join(dir, "dash.json")
	if err := os.WriteFile(dash, []byte(`{"panels": [{"type": "row", "panels": [
		{"title": "ok", "targets": [{"expr": "sum(rate(narad_messages_produced_total{topic=\"a\"}[$__rate_interval]))"}]},
		{"title": "typo", "targets": [{"expr": "sum(rate(narad_messages_produce_total[5m]))"}]},
		{"title": "alias", "targets": [{"expr": "narad_topics_total"}]},
		{"title": "label", "targets": [{"expr": "narad_http_requests_total{code=\"500\"}"}]}
	]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, complaints, err := check(t, "", dash)
	if err != nil {
		t.Fatalf("promcheck: %v\n%s", err, complaints)
	}
	got := unknown(lines, registry(t))
	want := []string{
		"panel typo: metric narad_messages_produce_total does not exist",
		"panel alias: narad_topics_total is the reference's deprecated name; use narad_topics",
		`panel label: narad_http_requests_total has no label "code" (it has [method route status])`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("reported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, []byte("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: rate(narad_nack_total[5m] > 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, complaints, err := check(t, rules, ""); err == nil || !strings.Contains(complaints, "rules.yml") {
		t.Errorf("a rule with unbalanced parentheses passed (err %v, complaints %q)", err, complaints)
	}
}

// TestEveryAlertHasARunbook: each alert of the rules file has a row in
// the alert list of docs/operations.md (what it means and the first
// step), and the replication alerts operators look for first exist with
// their hold times.
func TestEveryAlertHasARunbook(t *testing.T) {
	rules, err := os.ReadFile(rulesFile(t))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := os.ReadFile(filepath.Join(root(t), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(ops), "\n## Alerts\n")
	if !ok {
		t.Fatal("docs/operations.md has no \"## Alerts\" section")
	}
	list, _, _ = strings.Cut(list, "\n## ")
	holds := map[string]string{} // alert → its for:, "" when none
	for _, block := range strings.Split(string(rules), "- alert: ")[1:] {
		name, rest, _ := strings.Cut(block, "\n")
		name = strings.TrimSpace(name)
		holds[name] = ""
		for _, l := range strings.Split(rest, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "for: "); ok {
				holds[name] = v
				break
			}
		}
		if !strings.Contains(list, "| `"+name+"`") && !strings.Contains(list, ", `"+name+"` |") {
			t.Errorf("alert %s has no row in the alert list of docs/operations.md", name)
		}
	}
	if len(holds) < 10 {
		t.Fatalf("found %d alerts in %s; the rules file's layout changed?", len(holds), rulesFile(t))
	}
	for name, want := range map[string]string{
		"NaradUnderReplicatedPartitions": "5m",
		"NaradReplicationLagHigh":        "5m",
		"NaradPartitionWithoutLeader":    "1m",
	} {
		got, ok := holds[name]
		switch {
		case !ok:
			t.Errorf("no alert %s", name)
		case got != want:
			t.Errorf("alert %s holds for %q, want %s", name, got, want)
		}
	}
}
