// Package deploy tests the monitoring artifacts under deploy/: the Grafana
// dashboard and the Prometheus alerting rules.
//
// Invariant: every expression in them parses with Prometheus's own parser
// (scripts/promcheck, a module of its own so Prometheus's dependencies
// never enter narad's go.mod; and promtool too where it is installed), and
// every metric and label it selects is one the node's registry exports
// (metrics.Names), under its conventional name, not a deprecated alias. A
// dashboard panel that names a metric that does not exist shows "No data"
// for ever without an error; this package is what notices.
package deploy
