#!/usr/bin/env bash
# Start a local 3-node Narad cluster on loopback, for humans:
#
#   ./scripts/cluster.sh [DIR]      # data under DIR (default ./cluster-data)
#
# Node i (1..3) uses three ports from BASE + 100*i (BASE is 7842, or
# $NARAD_CLUSTER_BASE_PORT): HTTP on it, Raft on +1, node RPC on +2:
#   narad-1  http://127.0.0.1:7942  Raft 127.0.0.1:7943  node RPC :7944
#   narad-2  http://127.0.0.1:8042  Raft 127.0.0.1:8043  node RPC :8044
#   narad-3  http://127.0.0.1:8142  Raft 127.0.0.1:8143  node RPC :8144
# Logs go to DIR/narad-N.log. Ctrl-C stops all three (SIGTERM, graceful).
# A port already taken is refused before anything starts; a node that
# exits stops the others, and the script exits non-zero with its log tail.
# $NARAD_BIN runs that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-cluster-data}
base=${NARAD_CLUSTER_BASE_PORT:-7842}

# Something listening on a port makes that node fail at start with a bind
# error in its log; say which port, here, before starting any node.
taken=()
for i in 1 2 3; do
  for port in $((base + 100 * i)) $((base + 100 * i + 1)) $((base + 100 * i + 2)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      taken+=("$port")
    fi
  done
done
if ((${#taken[@]})); then
  echo "cluster.sh: port(s) ${taken[*]} on 127.0.0.1 already in use (another cluster.sh or narad?);" \
    "stop it, or set NARAD_CLUSTER_BASE_PORT to another base" >&2
  exit 1
fi

mkdir -p "$dir"
bin=${NARAD_BIN:-}
if [[ -z $bin ]]; then
  bin=$dir/narad
  go build -o "$bin" ./cmd/narad
fi

export NARAD_CLUSTER_SECRET=${NARAD_CLUSTER_SECRET:-local-dev-secret}
export NARAD_SECURITY_ENABLED=${NARAD_SECURITY_ENABLED:-false}
peers=""
for i in 1 2 3; do
  peers+="${peers:+,}narad-$i@127.0.0.1:$((base + 100 * i + 1))"
done
declare -A names=()
pids=()
for i in 1 2 3; do
  http=$((base + 100 * i))
  NARAD_NODE_ID=narad-$i \
  NARAD_HTTP_ADDR=127.0.0.1:$http \
  NARAD_CLUSTER_ADDR=127.0.0.1:$((http + 1)) \
  NARAD_CLUSTER_PEERS=$peers \
  NARAD_CLUSTER_INITIAL_MEMBERS=narad-1,narad-2,narad-3 \
  NARAD_DATA_DIR="$dir/narad-$i" \
  NARAD_LOG_FORMAT=text \
    "$bin" serve >"$dir/narad-$i.log" 2>&1 &
  pids+=($!)
  names[$!]=narad-$i
  echo "narad-$i: http://127.0.0.1:$http (pid $!, log $dir/narad-$i.log)"
done

stopping=0
trap 'stopping=1; kill -TERM "${pids[@]}" 2>/dev/null || true' INT TERM

# The first node to exit ends the cluster: silence would leave a user
# talking to two nodes, wondering why a third of the partitions are gone.
dead=
set +e
wait -n -p dead "${pids[@]}"
status=$?
set -e
if ((stopping)); then
  wait
  exit 0
fi
name=${names[$dead]:-a node}
echo "cluster.sh: $name (pid $dead) exited with status $status; stopping the others. Last lines of $dir/$name.log:" >&2
tail -n 20 "$dir/$name.log" >&2 || true
kill -TERM "${pids[@]}" 2>/dev/null || true
wait
exit 1
