// Package deploy holds the tests of what ships beside the binary: the
// Dockerfile and the Helm chart (deploy/helm/narad). It has no code of its
// own.
//
// The Dockerfile's rules are checked by reading the file: OCI labels,
// base images pinned by digest, no node id baked into the image (the data
// directory keeps it). The chart's rules are checked by rendering it with
// helm (found through NARAD_HELM, which scripts/helm-check.sh sets after
// building a pinned helm; without it those tests skip) and reading the
// objects it renders: the values schema refuses what would render a broken
// cluster, every NARAD_* variable the chart sets is a real setting, and
// each optional piece appears exactly when its value asks for it.
package deploy
