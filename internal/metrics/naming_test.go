package metrics

import (
	"slices"
	"strings"
	"testing"
)

// The Prometheus naming rules (prometheus.io, "Metric and label naming"):
// a counter ends in _total and nothing else does; a name carries its unit
// (no unitless _size); a histogram's name ends in its unit or in what it
// counts. The reference's names that break them are exported as
// deprecated aliases only (alias.go), and are exempt.
func TestNamesFollowPrometheusConventions(t *testing.T) {
	m := New()
	m.ObserveRaft(fakeRaft{})
	m.ObserveMembers(func() MemberCounts { return MemberCounts{} })
	m.ObserveReplication(func() ReplicationCounts { return ReplicationCounts{} })
	m.ObserveIngressWAL(func() WALCounts { return WALCounts{} })
	for _, f := range m.Names() {
		if f.AliasOf != "" {
			continue
		}
		total := strings.HasSuffix(f.Name, "_total")
		switch {
		case f.Type == "counter" && !total:
			t.Errorf("counter %s does not end in _total", f.Name)
		case f.Type != "counter" && total:
			t.Errorf("%s %s ends in _total, which only counters may", f.Type, f.Name)
		case strings.HasSuffix(f.Name, "_size"):
			t.Errorf("%s ends in a unitless _size: name the unit (_bytes) or what it counts (_messages)", f.Name)
		case f.Type == "histogram" && !slices.ContainsFunc([]string{"_seconds", "_bytes", "_records"}, func(s string) bool { return strings.HasSuffix(f.Name, s) }):
			t.Errorf("histogram %s does not end in its unit", f.Name)
		}
	}
}

// Every alias mirrors a family that exists, with the same type and labels.
func TestAliasesMirrorAFamily(t *testing.T) {
	fams := map[string]Family{}
	for _, f := range New().Names() {
		fams[f.Name] = f
	}
	for _, f := range fams {
		if f.AliasOf == "" {
			continue
		}
		src, ok := fams[f.AliasOf]
		if !ok || src.Type != f.Type || !slices.Equal(src.Labels, f.Labels) {
			t.Errorf("alias %s of %s: source %+v", f.Name, f.AliasOf, src)
		}
	}
}

// An alias shows the source's series under the reference's name, and
// loses them when the source does.
func TestAliasFollowsItsSource(t *testing.T) {
	m := New()
	m.InflightMessages.WithLabelValues("orders", "1").Set(7)
	m.FanoutDropped.WithLabelValues("orders", "audit").Add(3)
	m.Topics.Set(2)
	body := scrape(t, m)
	for _, want := range []string{
		`narad_inflight_messages{partition="1",topic="orders"} 7`,
		`narad_inflight_size{partition="1",topic="orders"} 7`,
		`narad_fanout_child_dropped_messages_total{child="audit",parent="orders"} 3`,
		`narad_fanout_child_dropped_messages{child="audit",parent="orders"} 3`,
		"# TYPE narad_fanout_child_dropped_messages counter",
		"narad_topics 2",
		"narad_topics_total 2",
		"# TYPE narad_topics_total gauge",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	m.InflightMessages.DeleteLabelValues("orders", "1")
	if body := scrape(t, m); strings.Contains(body, "narad_inflight_size{") {
		t.Error("the alias kept a series its source deleted")
	}
}
