#!/usr/bin/env bash
# The whole test suite: the house rules a machine can check (scripts/lint.sh:
# gofmt, vet, staticcheck, the one-way arrows), the Helm chart's lint and
# template tests (scripts/helm-check.sh), then every package's tests with
# the race detector, including the end-to-end and crash tests that build
# and run the real narad binary. Needs only Go (staticcheck and helm build
# themselves from the module proxy, pinned); the race detector also needs a
# C compiler (cgo), and without one the suite runs without -race, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

race=-race
if ! command -v "$(go env CC)" >/dev/null 2>&1; then
  echo "test.sh: no C compiler ($(go env CC)) for the race detector; running without -race" >&2
  race=
fi

./scripts/lint.sh
./scripts/helm-check.sh
# -count=1: never trust a cached pass for durability tests.
exec go test $race -count=1 -timeout 25m ./... "$@"
