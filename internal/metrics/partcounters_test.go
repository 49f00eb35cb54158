package metrics

import (
	"strings"
	"testing"
)

// A topic forgotten and created again counts from zero through the bound
// children: the cache must not keep the deleted child, whose counts no
// scrape would show.
func TestPartitionCountersForgetBoundChildren(t *testing.T) {
	for _, forget := range map[string]func(m *Metrics){
		"ForgetTopic": func(m *Metrics) { m.ForgetTopic("again") },
		"PruneTopics": func(m *Metrics) { m.PruneTopics(func(name string) bool { return name != "again" }) },
	} {
		m := New()
		m.MessagesConsumed.Add("again", 1, 5)
		m.MessagesConsumed.Add("other", 1, 2)
		if body := scrape(t, m); !strings.Contains(body, `narad_messages_consumed_total{partition="1",topic="again"} 5`) {
			t.Fatalf("bound child not counted:\n%s", grep(body, "messages_consumed"))
		}
		forget(m)
		m.MessagesConsumed.Add("again", 1, 3)
		body := scrape(t, m)
		if !strings.Contains(body, `narad_messages_consumed_total{partition="1",topic="again"} 3`) {
			t.Errorf("a topic created again does not count from zero:\n%s", grep(body, "messages_consumed"))
		}
		if !strings.Contains(body, `narad_messages_consumed_total{partition="1",topic="other"} 2`) {
			t.Errorf("another topic's series was forgotten:\n%s", grep(body, "messages_consumed"))
		}
	}
}

// BenchmarkPartitionCountersAdd is one count of a partition's records.
func BenchmarkPartitionCountersAdd(b *testing.B) {
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		m.MessagesConsumed.Add("orders", 2, 100)
	}
}

// BenchmarkWithLabelValuesAdd is the same count through the vector.
func BenchmarkWithLabelValuesAdd(b *testing.B) {
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		m.MessagesConsumed.WithLabelValues("orders", "2").Add(100)
	}
}
