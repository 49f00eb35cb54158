#!/usr/bin/env bash
# Start a local 3-node Narad cluster on loopback, for humans:
#
#   ./scripts/cluster.sh [DIR]      # data under DIR (default ./cluster-data)
#
# Node i serves HTTP on 127.0.0.1:794{1+i}0 ... concretely:
#   narad-1  http://127.0.0.1:7942  cluster 127.0.0.1:7943 (node RPC :7944)
#   narad-2  http://127.0.0.1:8042  cluster 127.0.0.1:8043 (node RPC :8044)
#   narad-3  http://127.0.0.1:8142  cluster 127.0.0.1:8143 (node RPC :8144)
# Logs go to DIR/narad-N.log. Ctrl-C stops all three (SIGTERM, graceful).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-cluster-data}
mkdir -p "$dir"
go build -o "$dir/narad" ./cmd/narad

export NARAD_CLUSTER_SECRET=${NARAD_CLUSTER_SECRET:-local-dev-secret}
export NARAD_SECURITY_ENABLED=${NARAD_SECURITY_ENABLED:-false}
peers="narad-1@127.0.0.1:7943,narad-2@127.0.0.1:8043,narad-3@127.0.0.1:8143"
pids=()
for i in 1 2 3; do
  base=$((7842 + 100 * i))
  NARAD_NODE_ID=narad-$i \
  NARAD_HTTP_ADDR=127.0.0.1:$base \
  NARAD_CLUSTER_ADDR=127.0.0.1:$((base + 1)) \
  NARAD_CLUSTER_PEERS=$peers \
  NARAD_CLUSTER_INITIAL_MEMBERS=narad-1,narad-2,narad-3 \
  NARAD_DATA_DIR="$dir/narad-$i" \
  NARAD_LOG_FORMAT=text \
    "$dir/narad" serve >"$dir/narad-$i.log" 2>&1 &
  pids+=($!)
  echo "narad-$i: http://127.0.0.1:$base (log $dir/narad-$i.log)"
done
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait' INT TERM
wait
