#!/usr/bin/env bash
# The project's rules that a machine can check, fastest first: gofmt,
# go vet, staticcheck (pinned, installed from the module proxy on first
# use), and the one-way arrows between packages (test/arch). Needs only
# Go and, the first time, the module proxy. scripts/test.sh runs this
# before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# The newest staticcheck that supports this module's Go (see go.mod).
# Bump deliberately: a new version brings new checks.
STATICCHECK_VERSION=v0.8.2

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
  echo "lint: not gofmt'd (run gofmt -w on them):" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go run "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION}" ./...
# -count=1: the import graph is read with go list, which a cached pass
# would not see change.
go test -count=1 ./test/arch/
