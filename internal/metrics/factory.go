package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Family describes one exported metric family: what a dashboard or an
// alerting rule may name.
type Family struct {
	Name   string   // with the narad_ prefix
	Type   string   // counter, gauge or histogram
	Labels []string // in declaration order
	// AliasOf is the conventional name this reference name mirrors (see
	// alias.go); empty for a family of its own.
	AliasOf string
}

// Names lists every narad_ family the node can export, aliases included,
// whether or not it has a series yet (a vector shows up in a scrape only
// once a label set is used). The go_ and process_ families of the
// Prometheus client are not listed.
func (m *Metrics) Names() []Family { return slices.Clone(m.families) }

// labelled is a vector with its label names, for deleting the series of a
// topic that is gone.
type labelled struct {
	vec    interface{ DeletePartialMatch(prometheus.Labels) int }
	coll   prometheus.Collector
	labels []string
}

type factory struct{ m *Metrics }

func name(n string) string { return "narad_" + n }

func (f factory) register(c prometheus.Collector, n, typ string, labels []string) {
	f.m.Registry.MustRegister(c)
	f.m.families = append(f.m.families, Family{Name: name(n), Type: typ, Labels: labels})
}

func (f factory) vec(v interface {
	prometheus.Collector
	DeletePartialMatch(prometheus.Labels) int
}, labels []string) {
	f.m.vecs = append(f.m.vecs, labelled{vec: v, coll: v, labels: labels})
}

func (f factory) counter(n, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name(n), Help: help})
	f.register(c, n, "counter", nil)
	return c
}

func (f factory) counterVec(n, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name(n), Help: help}, labels)
	f.register(c, n, "counter", labels)
	f.vec(c, labels)
	return c
}

// partitionCounters is counterVec labelled (topic, partition), with its
// children bound once (partcounters.go).
func (f factory) partitionCounters(n, help string) *PartitionCounters {
	labels := []string{"topic", "partition"}
	c := newPartitionCounters(prometheus.NewCounterVec(prometheus.CounterOpts{Name: name(n), Help: help}, labels))
	f.register(c, n, "counter", labels)
	f.vec(c, labels)
	return c
}

func (f factory) gauge(n, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name(n), Help: help})
	f.register(g, n, "gauge", nil)
	return g
}

func (f factory) gaugeVec(n, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name(n), Help: help}, labels)
	f.register(g, n, "gauge", labels)
	f.vec(g, labels)
	return g
}

func (f factory) counterFunc(n, help string, fn func() float64) {
	f.register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name(n), Help: help}, fn), n, "counter", nil)
}

func (f factory) gaugeFunc(n, help string, fn func() float64) {
	f.register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name(n), Help: help}, fn), n, "gauge", nil)
}

func (f factory) histogram(n, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name(n), Help: help, Buckets: buckets})
	f.register(h, n, "histogram", nil)
	return h
}

func (f factory) histogramVec(n, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name(n), Help: help, Buckets: buckets}, labels)
	f.register(h, n, "histogram", labels)
	f.vec(h, labels)
	return h
}
