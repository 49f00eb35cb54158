#!/usr/bin/env bash
# Mutation check of the fan-out engine's tests (issue 10, section 6): apply
# each breakage listed in scripts/mutate/fanout.txt, one at a time, to a
# private copy of the module, run the tests that should catch it, and print
# a score. Not part of the default test suite: it builds and runs the
# tests named for each breakage, about six minutes on two cores.
#
#   scripts/mutate.sh                      # every mutant
#   scripts/mutate.sh -only 'const-|force-' # a subset, by name
#   scripts/mutate.sh -v                    # show the output of survivors
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./scripts/mutate "$@"
