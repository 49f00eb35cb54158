#!/usr/bin/env bash
# The whole test suite: the house rules a machine can check (scripts/lint.sh:
# gofmt, vet, staticcheck, the one-way arrows), then every package's tests
# with the race detector, including the end-to-end and crash tests that
# build and run the real narad binary. Needs only Go (staticcheck installs
# itself from the module proxy, pinned); the race detector also needs a C
# compiler (cgo), and without one the suite runs without -race, saying so.
#
# test/deploy checks the Grafana dashboard and the alerting rules with
# scripts/promcheck, a module of its own (Prometheus's parser, kept out of
# narad's go.mod). Its first build on a fresh machine downloads that module
# through the proxy: about 150 MB and two to three minutes on two cores;
# afterwards it comes from the module and build caches in seconds. Where
# promtool is installed (Debian: the prometheus package), the rules are
# checked with it as well.
set -euo pipefail
cd "$(dirname "$0")/.."

race=-race
if ! command -v "$(go env CC)" >/dev/null 2>&1; then
  echo "test.sh: no C compiler ($(go env CC)) for the race detector; running without -race" >&2
  race=
fi

./scripts/lint.sh
# The public client as another module imports it (its own go.mod, outside
# internal/): ./... of this module does not reach into a nested module.
(cd test/clientmod && go vet ./... && go test $race -count=1 ./...)
# promcheck is outside ./..., so vet it here.
(cd scripts/promcheck && GOWORK=off go vet ./...)
# -count=1: never trust a cached pass for durability tests.
exec go test $race -count=1 -timeout 25m ./... "$@"
