#!/usr/bin/env bash
# The Helm chart's checks: `helm lint --strict` and `helm template` over
# the value sets a user is likely to try, then the chart's template tests
# (test/deploy, which render the chart and read the result). helm is built
# from the module proxy, pinned, into a cache directory the first time
# (about a minute; later runs reuse it). When it truly cannot be built (no
# module proxy, a Go older than helm needs) the checks are SKIPPED with a
# message saying why, and the suite goes on: the chart is then unchecked.
# scripts/test.sh runs this after lint.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# Bump deliberately: a new helm may lint differently. It must build with
# the Go in go.mod (helm v3.22 does with Go 1.26).
HELM_VERSION=v3.22.0

tools=${NARAD_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/narad-tools}
dir="$tools/helm-$HELM_VERSION"
helm="$dir/helm"
if [ ! -x "$helm" ]; then
  echo "helm-check: building helm $HELM_VERSION from the module proxy into $dir (once)" >&2
  mkdir -p "$dir"
  if ! out=$(GOBIN="$dir" go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" 2>&1); then
    echo "$out" | tail -n 5 >&2
    echo "helm-check: SKIPPED: cannot build helm $HELM_VERSION with $(go version | cut -d' ' -f3)" \
      "(see above); the Helm chart was not linted or tested" >&2
    exit 0
  fi
fi

chart=deploy/helm/narad
# Each line is one value set, as helm --set flags. Rendered without a
# cluster, a multi-node release must be given its cluster secret (the chart
# refuses to generate one that would change on every render).
value_sets=(
  "--set auth.clusterSecret=helm-check"
  "--set replicas=1"
  "--set auth.existingSecret=narad-creds"
  "--set replicas=5 --set cluster.bootstrapReplicas=3 --set auth.clusterSecret=helm-check"
  "--set tls.clusterSecret=narad-cluster-tls --set tls.apiSecret=narad-api-tls --set auth.clusterSecret=helm-check"
  "--set serviceMonitor.enabled=true --set podAntiAffinityPreset=hard --set auth.clusterSecret=helm-check"
)
for v in "${value_sets[@]}"; do
  # shellcheck disable=SC2086 # each set is split into its flags on purpose
  "$helm" lint --strict --quiet "$chart" $v >/dev/null || {
    echo "helm-check: helm lint --strict $chart $v failed:" >&2
    # shellcheck disable=SC2086
    "$helm" lint --strict "$chart" $v >&2
    exit 1
  }
  # shellcheck disable=SC2086
  "$helm" template narad "$chart" --namespace narad $v >/dev/null
done
echo "helm-check: helm $HELM_VERSION lint --strict and template passed (${#value_sets[@]} value sets)"

# The template tests find helm through NARAD_HELM (without it they skip).
NARAD_HELM="$helm" go test -count=1 ./test/deploy/
