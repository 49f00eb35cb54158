// Package deploy tests what ships beside the binary, under deploy/ and the
// Dockerfile. It has no code of its own.
//
// Monitoring: every expression in the Grafana dashboard and the Prometheus
// alerting rules parses with Prometheus's own parser (scripts/promcheck, a
// module of its own so Prometheus's dependencies never enter narad's
// go.mod; and promtool too where it is installed), and every metric and
// label it selects is one the node's registry exports (metrics.Names),
// under its conventional name, not a deprecated alias. A dashboard panel
// that names a metric that does not exist shows "No data" for ever without
// an error; this package is what notices.
//
// The Dockerfile, read as a file: OCI labels, base images pinned by digest
// (but for a listed debt), no node id baked into the image (the data
// directory keeps it), only real NARAD_* settings.
//
// The Helm chart (deploy/helm/narad), rendered with helm (found through
// NARAD_HELM, which scripts/helm-check.sh sets after building a pinned
// helm; without it those tests skip) and read as objects: the values
// schema refuses what would render a broken cluster, every NARAD_*
// variable the chart sets is a real setting, each optional piece appears
// exactly when its value asks for it, and the `helm test` Pod's steps,
// run against a real node, produce and consume one record.
package deploy
