package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The reference broker names a few series against the Prometheus naming
// rules: gauges ending in _total (narad_topics_total,
// narad_partitions_total), unitless _size gauges (narad_inflight_size,
// narad_acked_ahead_size) and a counter without _total
// (narad_fanout_child_dropped_messages). Dashboards and alerts built for
// the reference name them, and they must keep working; new ones should
// not learn them. So each such series is exported under the conventional
// name, which our own dashboard and rules use, and mirrored at scrape time
// under the reference's name, its HELP marking it deprecated. A mirror
// reads the source's series as they are at the scrape: it holds no state,
// so it can never disagree with the source, and a deleted series (a topic
// that is gone) leaves both names at once.

// alias mirrors src under the reference name old.
type alias struct {
	src    prometheus.Collector
	desc   *prometheus.Desc
	labels []string
	typ    prometheus.ValueType
}

// alias registers the mirror of the family last registered, src, under
// the name old.
func (f factory) alias(src prometheus.Collector, old string) {
	fam := f.m.families[len(f.m.families)-1]
	typ := prometheus.GaugeValue
	if fam.Type == "counter" {
		typ = prometheus.CounterValue
	}
	a := &alias{src: src, labels: fam.Labels, typ: typ,
		desc: prometheus.NewDesc(name(old), "Deprecated: the reference broker's name for "+fam.Name+"; prefer "+fam.Name+".", fam.Labels, nil)}
	f.m.Registry.MustRegister(a)
	f.m.families = append(f.m.families, Family{Name: name(old), Type: fam.Type, Labels: fam.Labels, AliasOf: fam.Name})
}

func (a *alias) Describe(ch chan<- *prometheus.Desc) { ch <- a.desc }

func (a *alias) Collect(ch chan<- prometheus.Metric) {
	src := make(chan prometheus.Metric)
	go func() {
		a.src.Collect(src)
		close(src)
	}()
	for s := range src {
		var pb dto.Metric
		if s.Write(&pb) != nil {
			continue
		}
		v := pb.GetGauge().GetValue()
		if a.typ == prometheus.CounterValue {
			v = pb.GetCounter().GetValue()
		}
		ch <- prometheus.MustNewConstMetric(a.desc, a.typ, v, labelValues(&pb, a.labels)...)
	}
}

// labelValues are pb's label values in the order of names (the protobuf
// form sorts them by name).
func labelValues(pb *dto.Metric, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		for _, l := range pb.GetLabel() {
			if l.GetName() == n {
				out[i] = l.GetValue()
			}
		}
	}
	return out
}
