package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// topicLabels are the labels whose value is a topic's name: a series with
// one of them describes that topic, and goes when the topic does.
var topicLabels = []string{"topic", "parent", "child"}

// ForgetTopic deletes every series that names the topic (as topic, parent
// or child): a deleted topic leaves no series behind, and one created
// again under the same name starts its counters from zero.
func (m *Metrics) ForgetTopic(topic string) {
	for _, v := range m.vecs {
		for _, l := range v.labels {
			if isTopicLabel(l) {
				v.vec.DeletePartialMatch(prometheus.Labels{l: topic})
			}
		}
	}
}

// PruneTopics deletes the series of every topic live does not know (see
// ForgetTopic) and returns the names it forgot. It is the sweep behind
// ForgetTopic: it catches a topic deleted through another node, or a gauge
// a background loop set again just after the deletion.
func (m *Metrics) PruneTopics(live func(topic string) bool) []string {
	gone := map[string]bool{}
	for _, v := range m.vecs {
		if !hasTopicLabel(v.labels) {
			continue
		}
		ch := make(chan prometheus.Metric)
		go func() {
			v.coll.Collect(ch)
			close(ch)
		}()
		for s := range ch {
			var pb dto.Metric
			if s.Write(&pb) != nil {
				continue
			}
			for _, l := range pb.GetLabel() {
				if isTopicLabel(l.GetName()) && !gone[l.GetValue()] && !live(l.GetValue()) {
					gone[l.GetValue()] = true
				}
			}
		}
	}
	out := make([]string, 0, len(gone))
	for t := range gone {
		m.ForgetTopic(t)
		out = append(out, t)
	}
	return out
}

func isTopicLabel(l string) bool {
	for _, t := range topicLabels {
		if l == t {
			return true
		}
	}
	return false
}

func hasTopicLabel(labels []string) bool {
	for _, l := range labels {
		if isTopicLabel(l) {
			return true
		}
	}
	return false
}
