package metrics

import (
	"strings"
	"testing"
)

// seriesOf sets one series naming topic in each kind of topic label.
func seriesOf(m *Metrics, topic string) {
	m.MessagesProduced.WithLabelValues(topic, "0").Inc()
	m.ConsumerLag.WithLabelValues(topic, "0").Set(1)
	m.TopicBytes.WithLabelValues(topic).Set(1)
	m.FanoutLag.WithLabelValues(topic, "kid", "0").Set(1)
	m.FanoutCommitted.WithLabelValues("mom", topic).Inc()
	m.HTTPDuration.WithLabelValues("GET", "/v1/topics/{topic}").Observe(1)
}

func TestForgetTopicDeletesItsSeries(t *testing.T) {
	m := New()
	seriesOf(m, "gone")
	seriesOf(m, "kept")
	m.ForgetTopic("gone")
	body := scrape(t, m)
	if strings.Contains(body, `"gone"`) {
		t.Errorf("series of a forgotten topic remain:\n%s", grep(body, `"gone"`))
	}
	if n := strings.Count(body, `"kept"`); n < 5 {
		t.Errorf("the other topic lost series: %d left", n)
	}
	if !strings.Contains(body, "narad_http_request_duration_seconds_count") {
		t.Error("a series without a topic label was deleted")
	}
}

func TestPruneTopicsForgetsWhatIsNotLive(t *testing.T) {
	m := New()
	seriesOf(m, "gone")
	seriesOf(m, "kept")
	got := m.PruneTopics(func(name string) bool { return name != "gone" && name != "mom" })
	if len(got) != 2 {
		t.Errorf("pruned %v, want gone and mom", got)
	}
	body := scrape(t, m)
	if strings.Contains(body, `"gone"`) || strings.Contains(body, `"mom"`) {
		t.Errorf("pruned topics left series:\n%s", grep(body, `"gone"`)+grep(body, `"mom"`))
	}
	if !strings.Contains(body, `narad_topic_bytes{topic="kept"} 1`) {
		t.Error("a live topic's series was pruned")
	}
}

func grep(body, s string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
