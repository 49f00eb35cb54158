#!/usr/bin/env bash
# Start a local 3-node Narad cluster on loopback, for humans:
#
#   ./scripts/cluster.sh [DIR]          # data under DIR (default ./cluster-data)
#   ./scripts/cluster.sh kill N [DIR]   # SIGKILL node N (1..3), from another terminal
#   ./scripts/cluster.sh start N [DIR]  # start node N again: same data dir, same settings
#
# Node i (1..3) uses three ports from BASE + 100*i (BASE is 7842, or
# $NARAD_CLUSTER_BASE_PORT): HTTP on it, Raft on +1, node RPC on +2:
#   narad-1  http://127.0.0.1:7942  Raft 127.0.0.1:7943  node RPC :7944
#   narad-2  http://127.0.0.1:8042  Raft 127.0.0.1:8043  node RPC :8044
#   narad-3  http://127.0.0.1:8142  Raft 127.0.0.1:8143  node RPC :8144
# Logs go to DIR/narad-N.log (a restart appends). Ctrl-C stops every node
# (SIGTERM, graceful). A port already taken is refused before anything
# starts. A node that exits is reported with its log's tail and the
# others keep running, so a failover can be watched and the node brought
# back with "start N"; the script ends when Ctrl-C stops it or no node is
# left. $NARAD_BIN runs that binary instead of building one.
#
# kill and start talk to the running script through DIR: it keeps its
# own pid in DIR/cluster.pid and each node's in DIR/narad-N.pid, and
# starts a node when "start N" leaves DIR/narad-N.start and wakes it with
# SIGUSR1 (the nodes must stay its children, so that Ctrl-C still stops
# every one of them).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${NARAD_CLUSTER_BASE_PORT:-7842}

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

# until_true SECONDS CONDITION...: run the condition every 0.1 s until it holds
# or SECONDS pass; false when they pass.
until_true() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.1
  done
}

node_arg() {
  [[ ${1:-} =~ ^[123]$ ]] || die "want a node number 1..3, got '${1:-}' (scripts/cluster.sh kill|start N [DIR])"
}

# alive PIDFILE: the pid in it names a running process.
alive() {
  local pid
  pid=$(cat "$1" 2>/dev/null) && [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null
}

supervisor() {
  alive "$dir/cluster.pid" || die "no cluster.sh is running for $dir (start the cluster with: scripts/cluster.sh $dir)"
  cat "$dir/cluster.pid"
}

case ${1:-} in
kill)
  node_arg "${2:-}"
  n=$2 dir=${3:-cluster-data}
  supervisor >/dev/null
  alive "$dir/narad-$n.pid" || die "narad-$n is not running"
  pid=$(cat "$dir/narad-$n.pid")
  kill -KILL "$pid"
  # Return once the cluster's script has seen the node go, so that a
  # "start" right after it is not refused as still running.
  until_true 10 test ! -e "$dir/narad-$n.pid" || die "narad-$n (pid $pid) killed, but cluster.sh has not noticed within 10s"
  echo "narad-$n (pid $pid) killed with SIGKILL; start it again with: scripts/cluster.sh start $n $dir"
  exit 0
  ;;
start)
  node_arg "${2:-}"
  n=$2 dir=${3:-cluster-data}
  sup=$(supervisor)
  if alive "$dir/narad-$n.pid"; then
    die "narad-$n is running (pid $(cat "$dir/narad-$n.pid"))"
  fi
  # A node that died by itself a moment ago may not be seen yet.
  until_true 10 test ! -e "$dir/narad-$n.pid" || die "narad-$n has exited, but cluster.sh has not noticed within 10s"
  touch "$dir/narad-$n.start"
  # The signal may land just before the script waits again, where it
  # wakes nothing: repeat it until the node's pid file appears.
  started() {
    [[ -e $dir/narad-$n.pid ]] && return
    kill -USR1 "$sup" 2>/dev/null
    return 1
  }
  until_true 10 started || die "cluster.sh (pid $sup) did not start narad-$n within 10s"
  echo "narad-$n started again (pid $(cat "$dir/narad-$n.pid"), log $dir/narad-$n.log)"
  exit 0
  ;;
esac

dir=${1:-cluster-data}
if alive "$dir/cluster.pid"; then
  die "a cluster.sh (pid $(cat "$dir/cluster.pid")) is already running for $dir"
fi

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

pids=("" "" "" "") # pids[i]: node i's pid while it runs
stopping=0
trap 'stopping=1; kill -TERM ${pids[*]} 2>/dev/null || true' INT TERM
trap : USR1 # only to wake the wait below; the loop looks for requests
# However the script ends, no node outlives it.
trap 'kill -TERM ${pids[*]} 2>/dev/null || true; rm -f "$dir/cluster.pid" "$dir"/narad-[123].pid "$dir"/narad-[123].start' EXIT
rm -f "$dir"/narad-[123].pid "$dir"/narad-[123].start
echo $$ >"$dir/cluster.pid"

# start_node I: node I with the same settings and data every time; its
# log is appended to, so a restart keeps what the last run said.
start_node() {
  local i=$1 http=$((base + 100 * $1))
  NARAD_NODE_ID=narad-$i \
  NARAD_HTTP_ADDR=127.0.0.1:$http \
  NARAD_CLUSTER_ADDR=127.0.0.1:$((http + 1)) \
  NARAD_CLUSTER_PEERS=$peers \
  NARAD_CLUSTER_INITIAL_MEMBERS=narad-1,narad-2,narad-3 \
  NARAD_DATA_DIR="$dir/narad-$i" \
  NARAD_LOG_FORMAT=text \
    "$bin" serve >>"$dir/narad-$i.log" 2>&1 &
  pids[i]=$!
  echo "$!" >"$dir/narad-$i.pid"
  echo "narad-$i: http://127.0.0.1:$http (pid $!, log $dir/narad-$i.log)"
}

# gone I STATUS: node I has exited; say so and keep the others.
gone() {
  local i=$1 pid=${pids[$1]}
  pids[i]=""
  rm -f "$dir/narad-$i.pid"
  ((stopping)) && return
  echo "cluster.sh: narad-$i (pid $pid) exited with status $2; the others keep running" \
    "(start it again: scripts/cluster.sh start $i $dir). Last lines of $dir/narad-$i.log:" >&2
  tail -n 20 "$dir/narad-$i.log" >&2 || true
}

for i in 1 2 3; do
  : >"$dir/narad-$i.log" # a new cluster, a new log
  start_node "$i"
done

while :; do
  # A node can exit while the loop is not in wait -n, which then never
  # reports it: find those by their pid, and their status with wait.
  for i in 1 2 3; do
    if [[ -n ${pids[i]} ]] && ! kill -0 "${pids[i]}" 2>/dev/null; then
      set +e
      wait "${pids[i]}"
      status=$?
      set -e
      gone "$i" "$status"
    fi
  done
  if ((stopping)); then
    wait
    exit 0
  fi
  for i in 1 2 3; do
    if [[ -e $dir/narad-$i.start ]]; then
      rm -f "$dir/narad-$i.start"
      if [[ -z ${pids[i]} ]]; then
        start_node "$i"
      fi
    fi
  done
  live=()
  for i in 1 2 3; do
    [[ -z ${pids[i]} ]] || live+=("${pids[i]}")
  done
  if ((${#live[@]} == 0)); then
    die "no node is left running; stopping"
  fi
  dead=
  set +e
  wait -n -p dead "${live[@]}"
  status=$?
  set -e
  # dead is unset when a signal (Ctrl-C, a start request) ended the wait.
  for i in 1 2 3; do
    if [[ -n ${dead:-} && ${pids[i]} == "$dead" ]]; then
      gone "$i" "$status"
    fi
  done
done
