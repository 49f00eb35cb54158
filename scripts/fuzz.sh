#!/usr/bin/env bash
# Runs every Go fuzz target of the module (found with go test -list, so a
# new target joins by existing) for FUZZTIME each, one at a time. The seed
# corpora also run as plain tests in scripts/test.sh; this explores beyond
# them. A failure leaves its input under the package's testdata/fuzz/:
# commit it with the fix, as the regression test.
#
#   scripts/fuzz.sh                    # every target, 10s each
#   FUZZTIME=2m scripts/fuzz.sh        # longer
#   scripts/fuzz.sh ./internal/meta/   # the targets of some packages
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-10s}
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

failed=0
ran=0
for pkg in $(go list "${pkgs[@]}"); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "fuzz: $pkg $target ($fuzztime)"
    ran=$((ran + 1))
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"; then
      failed=$((failed + 1))
    fi
  done
done
echo "fuzz: $ran targets, $failed failed"
[ "$ran" -gt 0 ] && [ "$failed" -eq 0 ]
