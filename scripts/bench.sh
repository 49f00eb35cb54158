#!/usr/bin/env bash
# The performance round's figures, measured the same way every time: a
# fresh single node and a fresh 3-node cluster on loopback, driven by
# `narad bench` on the same machine, each figure run ROUNDS times (default
# 3), printed as one table of medians with the min–max of the rounds.
#
#   ./scripts/bench.sh            # every figure
#   ROUNDS=5 ./scripts/bench.sh   # more rounds
#   FIGURES="single16 batch" ./scripts/bench.sh   # a subset (names below)
#   NODE_ENV="GOGC=200" ./scripts/bench.sh        # settings for the nodes only
#
# nats_r3_single is the anchor beside rf3_single: NATS JetStream with three
# replicas and sync_interval: always (nats_r1_single: one replica, the
# anchor's own ratio of three copies to one, beside rf3_single's), on three local servers, driven with
# the same load by scripts/anchors (its own module; nats-server is built
# from the Go module proxy at the version scripts/anchors/go.mod names).
# rabbitmq_r3_single is the other anchor: RabbitMQ quorum queues of three
# replicas on three local nodes, publisher confirms, the same load; it
# needs Debian's rabbitmq-server, which the script installs when it runs
# as root with apt-get and skips the figure otherwise.
#
# The scheduled-delivery figures create topics and consume with curl.
# Every 202 is fsynced, as always: nothing here relaxes durability. Ports
# 17942.. are used; the script refuses to start when one is taken. Opt-in
# (not part of the suite): figures on a shared machine are noise.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
figures=${FIGURES:-"ceiling16 ceiling64 single16 single64 consume1 batch batchconsume latency100 fanout10k sched1m schedlate groups sqs since cluster_single cluster_batch rf3_single rf1_batch rf3_batch rf3_batchconsume rf3_latency100 rf1_latency1000 rf3_latency1000 nats_r1_single nats_r3_single rabbitmq_r3_single"}
work=$(mktemp -d "${TMPDIR:-/tmp}/narad-bench.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  # The Erlang port mapper the RabbitMQ nodes started, when none ran before.
  if [ -n "${epmd_started:-}" ]; then epmd -kill >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT

go build -o "$work/narad" ./cmd/narad
narad=$work/narad
# The yardstick of the single-record produce figures (scripts/ceiling): the
# least an HTTP server can do to answer 202 only after a group-committed
# fdatasync, measured with the same client in the same round.
go build -o "$work/ceiling" ./scripts/ceiling

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ready PORT [PATH]: PATH (default /readyz; a NATS server's /healthz)
# answers 200 (bash's /dev/tcp: no curl needed).
ready() {
  local line
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "${2:-/readyz}" >&3
  read -r line <&3 || true
  exec 3<&-
  [[ $line == *" 200 "* ]]
}

# wait_ready PORT: poll /readyz for up to 30 s.
wait_ready() {
  for _ in $(seq 300); do
    if ready "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "bench.sh: the node on port $1 did not become ready; its log:" >&2
  tail -20 "$work"/*.log >&2
  exit 1
}

# start_nodes N: N fresh nodes (1: a single node), HTTP on 17942+100*i.
start_nodes() {
  local n=$1 peers="" members=""
  for i in $(seq 1 "$n"); do
    local base=$((17842 + 100 * i))
    for p in "$base" $((base + 1)) $((base + 2)); do
      port_free "$p" || { echo "bench.sh: port $p is taken" >&2; exit 1; }
    done
    peers+="${peers:+,}b$i@127.0.0.1:$((base + 1))"
    members+="${members:+,}b$i"
  done
  for i in $(seq 1 "$n"); do
    local base=$((17842 + 100 * i))
    local env=(NARAD_NODE_ID=b$i NARAD_HTTP_ADDR=127.0.0.1:$base NARAD_CLUSTER_ADDR=127.0.0.1:$((base + 1))
      NARAD_DATA_DIR="$work/data-$n-$i" NARAD_SECURITY_ENABLED=false NARAD_LOG_LEVEL=warn
      NARAD_CLUSTER_SECRET=bench-secret)
    if [ "$n" -gt 1 ]; then env+=(NARAD_CLUSTER_PEERS="$peers" NARAD_CLUSTER_INITIAL_MEMBERS="$members"); fi
    # NODE_ENV: more VAR=value settings for the nodes only (an experiment's).
    read -r -a extra <<<"${NODE_ENV:-}"
    env+=("${extra[@]}")
    env "${env[@]}" "$narad" serve >"$work/node-$n-$i.log" 2>&1 &
    pids+=($!)
  done
  for i in $(seq 1 "$n"); do wait_ready $((17842 + 100 * i)); done
}

# ticks PID: the process's user and system time, in clock ticks (1/100 s).
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# ticks_all: the user and system time of every running node, summed.
ticks_all() {
  local t=0 p
  for p in "${pids[@]}"; do t=$((t + $(ticks "$p"))); done
  echo "$t"
}

# syncs URL...: the fdatasyncs the nodes made so far, summed — partition
# logs' (narad_storage_fsync_duration_seconds_count) and ingress WALs'
# (narad_ingress_wal_syncs_total) — read from /metrics with bash's
# /dev/tcp, as ready does.
syncs() {
  local total=0 u port line
  for u in "$@"; do
    port=${u##*:}
    exec 3<>"/dev/tcp/127.0.0.1/$port"
    printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    while read -r line <&3; do
      case $line in
        narad_storage_fsync_duration_seconds_count* | narad_storage_journal_sync_duration_seconds_count* | narad_ingress_wal_syncs_total*)
          total=$(awk -v a="$total" -v b="${line##* }" 'BEGIN { printf "%.0f", a + b }') ;;
      esac
    done
    exec 3<&-
  done
  echo "$total"
}

# last LIST: the last of a space-separated list.
last() { awk '{ print $NF }' <<<"$1"; }

stop_nodes() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
    # Not this shell's child (a RabbitMQ node's beam.smp): wait for it to
    # end, up to 30 s.
    for _ in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  pids=()
}

# start_nats: three fresh NATS servers in one JetStream cluster (client
# ports 18401-18403), every write fsynced (sync_interval: always, the
# setting that matches Narad's fdatasync before every 202); nats_urls
# lists them. stop_nodes stops them too.
start_nats() {
  local routes="" i p
  for i in 1 2 3; do
    for p in $((18400 + i)) $((18410 + i)) $((18420 + i)); do
      port_free "$p" || { echo "bench.sh: port $p is taken" >&2; exit 1; }
    done
    routes+="${routes:+, }nats-route://127.0.0.1:$((18410 + i))"
  done
  nats_urls=""
  for i in 1 2 3; do
    rm -rf "$work/nats-$i"
    printf '%s\n' "server_name: nb$i" "listen: 127.0.0.1:$((18400 + i))" "http: 127.0.0.1:$((18420 + i))" \
      "jetstream { store_dir: \"$work/nats-$i\", sync_interval: always }" \
      "cluster { name: bench, listen: 127.0.0.1:$((18410 + i)), routes: [$routes] }" >"$work/nats-$i.conf"
    "$work/nats-server" -c "$work/nats-$i.conf" >"$work/nats-$i.log" 2>&1 &
    pids+=($!)
    nats_urls+="${nats_urls:+,}nats://127.0.0.1:$((18400 + i))"
  done
  for i in 1 2 3; do
    for _ in $(seq 300); do
      if ready $((18420 + i)) /healthz 2>/dev/null; then continue 2; fi
      sleep 0.1
    done
    echo "bench.sh: NATS server $i did not become healthy; its log:" >&2
    tail -20 "$work/nats-$i.log" >&2
    exit 1
  done
}

# start_rabbitmq: three fresh RabbitMQ nodes in one cluster (AMQP ports
# 18431-18433, Erlang distribution 18441-18443, formed from the config's
# list of nodes), with no plugins; rabbitmq_urls lists them. Quorum queues
# fsync every message before its confirm, which needs no setting. The
# nodes' beam.smp processes join pids, so that stop_nodes stops them and
# ticks_all counts their CPU (their shell wrappers only wait).
start_rabbitmq() {
  local i p home=$work/rabbitmq
  for i in 1 2 3; do
    for p in $((18430 + i)) $((18440 + i)); do
      port_free "$p" || { echo "bench.sh: port $p is taken" >&2; exit 1; }
    done
  done
  rm -rf "$home" && mkdir -p "$home"
  if ! pgrep -x epmd >/dev/null; then epmd_started=1; fi
  # The CLI and the nodes read the cookie from HOME.
  printf 'narad-bench' >"$home/.erlang.cookie" && chmod 400 "$home/.erlang.cookie"
  printf '%s\n' "cluster_formation.peer_discovery_backend = classic_config" \
    "cluster_formation.classic_config.nodes.1 = rb1@localhost" \
    "cluster_formation.classic_config.nodes.2 = rb2@localhost" \
    "cluster_formation.classic_config.nodes.3 = rb3@localhost" "loopback_users = none" >"$home/rabbitmq.conf"
  echo '[].' >"$home/plugins"
  rabbitmq_urls=""
  local wrappers=()
  for i in 1 2 3; do
    HOME=$home RABBITMQ_NODENAME=rb$i@localhost RABBITMQ_NODE_PORT=$((18430 + i)) RABBITMQ_DIST_PORT=$((18440 + i)) \
      RABBITMQ_MNESIA_BASE="$home/data-$i" RABBITMQ_LOG_BASE="$home/log-$i" RABBITMQ_CONFIG_FILE="$home/rabbitmq.conf" \
      RABBITMQ_ENABLED_PLUGINS_FILE="$home/plugins" "$rabbitmq/rabbitmq-server" >"$work/rabbitmq-$i.log" 2>&1 &
    pids+=($!)
    wrappers+=($!)
    rabbitmq_urls+="${rabbitmq_urls:+,}amqp://guest:guest@127.0.0.1:$((18430 + i))/"
  done
  for p in "${wrappers[@]}"; do
    for _ in $(seq 100); do
      local beam
      beam=$(pgrep -P "$p" beam.smp || true)
      if [ -n "$beam" ]; then pids+=("$beam"); break; fi
      sleep 0.1
    done
  done
  # Until the first node answers, the CLI fails at once: ask again.
  for _ in $(seq 120); do
    if HOME=$home "$rabbitmq/rabbitmqctl" -q -n rb1@localhost await_online_nodes 3 >"$work/rabbitmq-ctl.log" 2>&1; then
      return 0
    fi
    sleep 1
  done
  echo "bench.sh: the RabbitMQ cluster did not form in 2 minutes; its logs:" >&2
  tail -n 5 "$work"/rabbitmq-*.log >&2
  exit 1
}

# rabbitmq_round NAME: one round of RabbitMQ single-message publishing on
# fresh nodes, into three quorum queues of three replicas, each led by
# another node (as a topic of three partitions).
rabbitmq_round() {
  local name=$1 line t0
  start_rabbitmq
  "$work/anchors" -broker rabbitmq -create -urls "$rabbitmq_urls" -streams 3 -replicas 3
  t0=$(ticks_all)
  line=$("$work/anchors" -broker rabbitmq -urls "$rabbitmq_urls" -streams 3 -producers 6 -messages 10000 -size 256)
  cpu[$name]+="$(awk -v t="$(($(ticks_all) - t0))" 'BEGIN { printf "%.0f", t * 1e4 / 30000 }') "
  rate[$name]+="$(awk '{ for (i = 1; i < NF; i++) if ($i == "messages_per_second") print $(i + 1) }' <<<"$line") "
  p99[$name]+="$(awk '{ for (i = 1; i < NF; i++) if ($i == "p99_us") print $(i + 1) }' <<<"$line") "
  stop_nodes
}

# field JSON PHASE KEY: a number from narad bench --json's PHASE section
# (produce or consume); KEY is messages_per_second or p99 (microseconds).
field() {
  awk -v phase="\"$2\": {" -v key="\"$3\":" '
    index($0, phase) { on = 1 }
    on && index($0, key) { gsub(/[,}]/, "", $2); print $2; exit }' <<<"$1"
}

# stats: median and min–max of the numbers on stdin, as integers.
stats() {
  sort -n | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "-"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.0f (%.0f–%.0f)", m, v[1], v[NR] }'
}

if [[ " $figures " == *" nats_r"[13]"_single "* || " $figures " == *" rabbitmq_r3_single "* ]]; then
  (cd scripts/anchors && go build -o "$work/nats-server" github.com/nats-io/nats-server/v2 && go build -o "$work/anchors" .)
fi
rabbitmq=/usr/lib/rabbitmq/bin
if [[ " $figures " == *" rabbitmq_r3_single "* ]] && [ ! -x "$rabbitmq/rabbitmq-server" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bench.sh: installing Debian's rabbitmq-server for rabbitmq_r3_single" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rabbitmq-server) >"$work/apt.log" 2>&1 ||
      { echo "bench.sh: installing rabbitmq-server failed; its log:" >&2; tail -5 "$work/apt.log" >&2; }
  fi
  if [ ! -x "$rabbitmq/rabbitmq-server" ]; then
    echo "bench.sh: rabbitmq-server is not installed (Debian's package; apt-get as root installs it): rabbitmq_r3_single skipped" >&2
    figures=${figures/rabbitmq_r3_single/}
  fi
fi

declare -A rate p99 e2e50 e2e99 seek cpu fsyncs
# run NAME PHASE URLS... -- BENCH ARGS: one round; with several URLs the
# benches run at once, one per node, and their rates add up.
run() {
  local name=$1 phase=$2; shift 2
  local urls=()
  while [ "$1" != -- ]; do urls+=("$1"); shift; done
  shift
  local outs=() i=0
  for u in "${urls[@]}"; do
    "$narad" -s "$u" bench --json "$@" >"$work/out-$i.json" &
    outs+=($!)
    i=$((i + 1))
  done
  for p in "${outs[@]}"; do wait "$p" || { echo "bench.sh: $name: narad bench failed" >&2; exit 1; }; done
  local sum=0 worst=0
  for j in $(seq 0 $((i - 1))); do
    local json
    json=$(cat "$work/out-$j.json")
    sum=$(awk -v a="$sum" -v b="$(field "$json" "$phase" messages_per_second)" 'BEGIN { print a + b }')
    local q
    q=$(field "$json" "$phase" p99)
    [ "$q" -gt "$worst" ] && worst=$q
  done
  rate[$name]+="$sum "
  p99[$name]+="$worst "
}

# e2e NAME BENCH ARGS: one --e2e round on the single node; keeps the
# end-to-end p50 and p99 (produce request start to a consumer holding it).
# E2E_URL (default the single node) is the node it runs against.
e2e() {
  local name=$1; shift
  run "$name" consume "${E2E_URL:-$single}" -- --e2e "$@"
  local json
  json=$(cat "$work/out-0.json")
  e2e50[$name]+="$(field "$json" end_to_end_us p50) "
  e2e99[$name]+="$(field "$json" end_to_end_us p99) "
}

# nats_round NAME REPLICAS: one round of NATS single-message publishing on
# fresh servers, into three streams of REPLICAS replicas (as a topic of
# three partitions: each publisher spreads its messages over them in turn).
nats_round() {
  local name=$1 replicas=$2 line t0
  start_nats
  "$work/anchors" -create -urls "$nats_urls" -streams 3 -replicas "$replicas"
  t0=$(ticks_all)
  line=$("$work/anchors" -urls "$nats_urls" -streams 3 -producers 6 -messages 10000 -size 256)
  cpu[$name]+="$(awk -v t="$(($(ticks_all) - t0))" 'BEGIN { printf "%.0f", t * 1e4 / 30000 }') "
  rate[$name]+="$(awk '{ for (i = 1; i < NF; i++) if ($i == "messages_per_second") print $(i + 1) }' <<<"$line") "
  p99[$name]+="$(awk '{ for (i = 1; i < NF; i++) if ($i == "p99_us") print $(i + 1) }' <<<"$line") "
  stop_nodes
}

want() { [[ " $figures " == *" $1 "* ]]; }
single=http://127.0.0.1:17942
all=(http://127.0.0.1:17942 http://127.0.0.1:18042 http://127.0.0.1:18142)

for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds" >&2
  if want ceiling16 || want ceiling64; then
    port_free 17999 || { echo "bench.sh: port 17999 is taken" >&2; exit 1; }
    mkdir -p "$work/ceiling-data"
    "$work/ceiling" -addr 127.0.0.1:17999 -dir "$work/ceiling-data" 2>"$work/ceiling.log" &
    pids+=($!)
    wait_ready 17999
    want ceiling16 && run ceiling16 produce http://127.0.0.1:17999 -- --producers 16 --messages 30000 --size 256
    want ceiling64 && run ceiling64 produce http://127.0.0.1:17999 -- --producers 64 --messages 60000 --size 256
    stop_nodes
    rm -rf "$work/ceiling-data"
  fi
  if want single16 || want single64 || want consume1 || want batch || want batchconsume || want latency100 || want fanout10k; then
    start_nodes 1
    want single16 && run single16 produce "$single" -- --producers 16 --messages 30000 --size 256
    want single64 && run single64 produce "$single" -- --producers 64 --messages 60000 --size 256
    want consume1 && run consume1 consume "$single" -- --producers 16 --messages 20000 --size 256 --consumers 16 --consume-max 1
    if want batch || want batchconsume; then
      run batch produce "$single" -- --producers 8 --batch 100 --messages 400000 --size 256 --consumers 8 --consume-max 100
      # The same run's consume phase is the batch consume + batch ack figure.
      rate[batchconsume]+="$(field "$(cat "$work/out-0.json")" consume messages_per_second) "
      p99[batchconsume]+="$(field "$(cat "$work/out-0.json")" consume p99) "
    fi
    want latency100 && e2e latency100 --rate 100 --producers 4 --duration 10s --size 256
    want fanout10k && e2e fanout10k --via-child --rate 10000 --batch 100 --producers 4 --consumers 4 --duration 10s --size 256
    rss=$(awk '/VmRSS/ { print $2 }' "/proc/${pids[0]}/status" 2>/dev/null || echo 0)
    rate[rss_kib]+="$rss "
    stop_nodes
  fi
  if want sched1m || want schedlate; then
    # Scheduled delivery (docs/concepts.md, "Scheduled delivery") on a
    # fresh node: 1,000,000 records produced an hour ahead beside the
    # same produce unscheduled, then filed in the schedule by consumes
    # (nothing is due), with the node's RSS before the produce and after
    # the filing; and the time past the due time of records falling due
    # at 10,000 a second.
    start_nodes 1
    if want sched1m; then
      for t in plain1m sched1m; do
        curl -sf -XPOST "$single/v1/topics" -d "{\"name\":\"$t\",\"partitions\":3}" >/dev/null
      done
      run plain1m produce "$single" -- plain1m --producers 8 --batch 100 --messages 1000000 --size 256
      rss0=$(awk '/VmRSS/ { print $2 }' "/proc/${pids[0]}/status")
      run sched1m produce "$single" -- sched1m --producers 8 --batch 100 --messages 1000000 --size 256 --delay 1h
      # Consumes file what is not due; describe counts it.
      for _ in $(seq 100); do
        curl -sf "$single/v1/topics/sched1m/consume?max=1000" >/dev/null
        n=$(curl -sf "$single/v1/topics/sched1m" | grep -o '"scheduled":[0-9]*' | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }')
        [ "$n" -ge 1000000 ] && break
      done
      rss1=$(awk '/VmRSS/ { print $2 }' "/proc/${pids[0]}/status")
      rate[sched1m_rss]+="$(( (rss1 - rss0) / 1024 )) "
    fi
    want schedlate && e2e schedlate --delay 5s --rate 10000 --batch 100 --producers 4 --consumers 4 --duration 10s --size 256
    stop_nodes
  fi
  if want since; then
    # Reading by time: the first offset at a time in a partition of
    # 1,000 segments, found by bisection (Go benchmark: a log in a
    # temporary directory, no server).
    out=$(go test -run '^$' -bench 'OffsetAtTime' -benchtime 20x ./internal/storage/)
    for v in warm cold; do
      ns=$(awk -v b="BenchmarkOffsetAtTime/$v" 'index($1, b) == 1 { print $3 }' <<<"$out")
      seek[$v]+="$((ns / 1000)) "
    done
  fi
  if want groups; then
    # Message groups (docs/concepts.md, "Message groups"): consume + ack
    # of records over 10,000 keys by 16 consumers, each key a group,
    # beside the same run with ordering none.
    start_nodes 1
    for o in none group; do
      run "groups_$o" consume "$single" -- --producers 8 --batch 100 --messages 200000 --size 256 \
        --keys 10000 --ordering "$o" --consumers 16 --consume-max 10
    done
    stop_nodes
  fi
  if want sqs; then
    # The node's two protocols side by side (docs/aws.md): the same
    # loads through /v1 and through SQS (narad bench --api sqs), on one
    # fresh node, with the node's CPU per message from /proc. A consume
    # figure's run produces first (in tens, through the same protocol):
    # its CPU is the run's less that produce at the send-in-tens figure's
    # cost per message.
    start_nodes 1
    for api in native sqs; do
      for f in send1 send10 recv1 recv10; do
        case $f in
          send1) n=20000 phase=produce args=() ;;
          send10) n=100000 phase=produce args=(--batch 10) ;;
          recv1) n=20000 phase=consume args=(--batch 10 --consumers 16 --consume-max 1) ;;
          recv10) n=100000 phase=consume args=(--batch 10 --consumers 16 --consume-max 10) ;;
        esac
        t0=$(ticks "${pids[0]}")
        run "${api}_$f" "$phase" "$single" -- --api "$api" --size 256 --producers 16 --messages "$n" "${args[@]}"
        us=$(awk -v t="$(($(ticks "${pids[0]}") - t0))" -v n="$n" 'BEGIN { printf "%.0f", t * 1e4 / n }')
        [ "$phase" = consume ] && us=$(awk -v a="$us" -v s="$(last "${cpu[${api}_send10]}")" 'BEGIN { print a - s }')
        cpu[${api}_$f]+="$us "
      done
    done
    stop_nodes
  fi
  if want cluster_single || want cluster_batch || want rf3_single || want rf1_batch || want rf3_batch || want rf3_batchconsume ||
    want rf3_latency100 || want rf1_latency1000 || want rf3_latency1000; then
    start_nodes 3
    # The one-copy and three-copy single-record figures also keep the
    # nodes' CPU per record, the three nodes summed (30,000 records).
    if want cluster_single; then
      t0=$(ticks_all)
      run cluster_single produce "${all[@]}" -- --producers 6 --messages 10000 --size 256
      cpu[cluster_single]+="$(awk -v t="$(($(ticks_all) - t0))" 'BEGIN { printf "%.0f", t * 1e4 / 30000 }') "
    fi
    want cluster_batch && run cluster_batch produce "${all[@]}" -- --producers 4 --batch 100 --messages 150000 --size 256
    # The same figures on topics of three copies (replication_factor 3):
    # a 202 waits for a majority of the copies' fdatasyncs.
    if want rf3_single; then
      for i in 0 1 2; do n0[$i]=$(syncs "${all[$i]}"); done
      t0=$(ticks_all)
      run rf3_single produce "${all[@]}" -- --replication-factor 3 --producers 6 --messages 10000 --size 256
      cpu[rf3_single]+="$(awk -v t="$(($(ticks_all) - t0))" 'BEGIN { printf "%.0f", t * 1e4 / 30000 }') "
      # fdatasyncs per acknowledged record (10,000 records from each
      # node), each node's and the three together.
      d=0
      for i in 0 1 2; do
        di=$(($(syncs "${all[$i]}") - n0[$i]))
        d=$((d + di))
        fsyncs[rf3_node$i]+="$(awk -v d="$di" 'BEGIN { printf "%.2f", d / 30000 }') "
      done
      fsyncs[rf3_single]+="$(awk -v d="$d" 'BEGIN { printf "%.2f", d / 30000 }') "
    fi
    # The batch figure's one-copy baseline: the same load on a topic of
    # one copy, on the same nodes.
    want rf1_batch && run rf1_batch produce "${all[0]}" -- --producers 8 --batch 100 --messages 200000 --size 256
    if want rf3_batch || want rf3_batchconsume; then
      run rf3_batch produce "${all[0]}" -- --replication-factor 3 --producers 8 --batch 100 --messages 200000 --size 256 --consumers 8 --consume-max 100
      rate[rf3_batchconsume]+="$(field "$(cat "$work/out-0.json")" consume messages_per_second) "
      p99[rf3_batchconsume]+="$(field "$(cat "$work/out-0.json")" consume p99) "
    fi
    want rf3_latency100 && E2E_URL=${all[0]} e2e rf3_latency100 --replication-factor 3 --rate 100 --producers 4 --duration 10s --size 256
    # Produce → consumed at 1,000 msg/s through node 1, one copy and three.
    want rf1_latency1000 && E2E_URL=${all[0]} e2e rf1_latency1000 --rate 1000 --producers 4 --duration 10s --size 256
    want rf3_latency1000 && E2E_URL=${all[0]} e2e rf3_latency1000 --replication-factor 3 --rate 1000 --producers 4 --duration 10s --size 256
    stop_nodes
  fi
  want nats_r1_single && nats_round nats_r1_single 1
  want nats_r3_single && nats_round nats_r3_single 3
  want rabbitmq_r3_single && rabbitmq_round rabbitmq_r3_single
done

printf '\n%-52s %-28s %s\n' "figure (256-byte records, fsync before every 202)" "msg/s median (min–max)" "p99 µs median (min–max)"
label() {
  case $1 in
    ceiling16) echo "ceiling: minimal fsync server, 16 clients" ;;
    ceiling64) echo "ceiling: minimal fsync server, 64 clients" ;;
    single16) echo "single-record produce, 16 clients" ;;
    single64) echo "single-record produce, 64 clients" ;;
    consume1) echo "consume + ack one per call, 16 consumers" ;;
    batch) echo "batch produce, 100 per request, 8 clients" ;;
    batchconsume) echo "batch consume (max=100) + batch ack, 8 consumers" ;;
    cluster_single) echo "3 nodes, single produce, 6 clients per node" ;;
    cluster_batch) echo "3 nodes, batch produce of 100, 4 clients per node" ;;
    rf3_single) echo "3 nodes, 3 copies, single produce, 6 clients per node" ;;
    rf1_batch) echo "3 nodes, 1 copy, batch produce of 100, 8 clients" ;;
    rf3_batch) echo "3 nodes, 3 copies, batch produce of 100, 8 clients" ;;
    rf3_batchconsume) echo "3 nodes, 3 copies, batch consume + batch ack" ;;
    nats_r1_single) echo "NATS JetStream R1, sync always, 6 clients per server" ;;
    nats_r3_single) echo "NATS JetStream R3, sync always, 6 clients per server" ;;
    rabbitmq_r3_single) echo "RabbitMQ quorum ×3, confirms, 6 clients per node" ;;
    plain1m) echo "batch produce of 1,000,000, 8 clients" ;;
    sched1m) echo "the same, every record scheduled 1 h ahead" ;;
    groups_none) echo "consume + ack, 10,000 keys, 16 consumers of 10" ;;
    groups_group) echo "the same, each key a message group" ;;
    native_send1) echo "/v1: produce one a request, 16 clients" ;;
    sqs_send1) echo "SQS: SendMessage, 16 clients" ;;
    native_send10) echo "/v1: batch produce of 10, 16 clients" ;;
    sqs_send10) echo "SQS: SendMessageBatch of 10, 16 clients" ;;
    native_recv1) echo "/v1: consume + ack one per call, 16 consumers" ;;
    sqs_recv1) echo "SQS: ReceiveMessage + DeleteMessage, 16 consumers" ;;
    native_recv10) echo "/v1: consume 10 + batch ack, 16 consumers" ;;
    sqs_recv10) echo "SQS: ReceiveMessage of 10 + DeleteMessageBatch" ;;
  esac
}
for f in $(sed 's/sched1m/plain1m sched1m/; s/groups/groups_none groups_group/;
  s/sqs/native_send1 sqs_send1 native_send10 sqs_send10 native_recv1 sqs_recv1 native_recv10 sqs_recv10/' <<<"$figures"); do
  [ -n "${rate[$f]:-}" ] || continue
  [ -n "${e2e99[$f]:-}" ] && continue
  printf '%-52s %-28s %s\n' "$(label "$f")" "$(tr ' ' '\n' <<<"${rate[$f]}" | grep . | stats)" \
    "$(tr ' ' '\n' <<<"${p99[$f]}" | grep . | stats)"
done
for f in latency100 fanout10k schedlate rf3_latency100 rf1_latency1000 rf3_latency1000; do
  [ -n "${e2e99[$f]:-}" ] || continue
  case $f in
    latency100) l="produce → consumed, 100 msg/s offered" ;;
    fanout10k) l="produce → consumed from a child, 10,000 msg/s offered" ;;
    schedlate) l="scheduled 5 s ahead: consumed past due, 10,000 msg/s" ;;
    rf3_latency100) l="3 copies: produce → consumed, 100 msg/s offered" ;;
    rf1_latency1000) l="3 nodes, 1 copy: produce → consumed, 1,000 msg/s" ;;
    rf3_latency1000) l="3 copies: produce → consumed, 1,000 msg/s offered" ;;
  esac
  printf '%-52s p50 µs %s, p99 µs %s\n' "$l" "$(tr ' ' '\n' <<<"${e2e50[$f]}" | grep . | stats)" \
    "$(tr ' ' '\n' <<<"${e2e99[$f]}" | grep . | stats)"
done
for v in warm cold; do
  [ -n "${seek[$v]:-}" ] || continue
  printf '%-52s %s\n' "since: first offset at a time, 1,000 segments, $v (µs)" "$(tr ' ' '\n' <<<"${seek[$v]}" | grep . | stats)"
done
if [ -n "${rate[sched1m_rss]:-}" ]; then
  printf '%-52s %s\n' "RSS growth, 1,000,000 scheduled and filed (MiB)" "$(tr ' ' '\n' <<<"${rate[sched1m_rss]}" | grep . | stats)"
fi
if [ -n "${rate[rss_kib]:-}" ]; then
  printf '%-52s %s\n' "single node RSS after its round (KiB)" "$(tr ' ' '\n' <<<"${rate[rss_kib]}" | grep . | stats)"
fi
# ratio A B: figure A's median rate over figure B's.
ratio() {
  local a b
  a=$(tr ' ' '\n' <<<"${rate[$1]}" | grep . | stats | cut -d' ' -f1)
  b=$(tr ' ' '\n' <<<"${rate[$2]}" | grep . | stats | cut -d' ' -f1)
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }'
}
# fsyncstats: stats for the decimal fdatasync counts on stdin.
fsyncstats() { grep . | sort -n | awk '{ v[NR] = $1 } END { printf "%s (%s–%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
if [ -n "${fsyncs[rf3_single]:-}" ]; then
  printf '%-52s %s\n' "3 copies, single produce: fdatasyncs per record" "$(tr ' ' '\n' <<<"${fsyncs[rf3_single]}" | fsyncstats)"
  printf '%-52s %s, %s, %s\n' "  the same, node 1, 2, 3" "$(tr ' ' '\n' <<<"${fsyncs[rf3_node0]}" | fsyncstats)" \
    "$(tr ' ' '\n' <<<"${fsyncs[rf3_node1]}" | fsyncstats)" "$(tr ' ' '\n' <<<"${fsyncs[rf3_node2]}" | fsyncstats)"
fi
# Three copies against one on the same nodes, in the same rounds: the
# rate's ratio, and the nodes' CPU per record (three nodes summed).
if [ -n "${rate[rf3_single]:-}" ] && [ -n "${rate[cluster_single]:-}" ]; then
  printf '%-52s %s of 1 copy; node CPU µs/record, 1 copy %s, 3 copies %s\n' "3 copies, single produce" "$(ratio rf3_single cluster_single)" \
    "$(tr ' ' '\n' <<<"${cpu[cluster_single]}" | grep . | stats)" "$(tr ' ' '\n' <<<"${cpu[rf3_single]}" | grep . | stats)"
fi
if [ -n "${rate[rf3_single]:-}" ] && [ -n "${rate[nats_r3_single]:-}" ]; then
  printf '%-52s %s of NATS R3; server CPU µs/record, Narad %s, NATS %s\n' "3 copies, single produce" "$(ratio rf3_single nats_r3_single)" \
    "$(tr ' ' '\n' <<<"${cpu[rf3_single]}" | grep . | stats)" "$(tr ' ' '\n' <<<"${cpu[nats_r3_single]}" | grep . | stats)"
fi
if [ -n "${rate[rf3_single]:-}" ] && [ -n "${rate[rabbitmq_r3_single]:-}" ]; then
  printf '%-52s %s of RabbitMQ quorum; server CPU µs/record, Narad %s, RabbitMQ %s\n' "3 copies, single produce" \
    "$(ratio rf3_single rabbitmq_r3_single)" "$(tr ' ' '\n' <<<"${cpu[rf3_single]}" | grep . | stats)" \
    "$(tr ' ' '\n' <<<"${cpu[rabbitmq_r3_single]}" | grep . | stats)"
fi
# NATS's own three replicas against one, in the same rounds.
if [ -n "${rate[nats_r1_single]:-}" ] && [ -n "${rate[nats_r3_single]:-}" ]; then
  printf '%-52s %s of R1; server CPU µs/record, R1 %s, R3 %s\n' "NATS R3, single publish" "$(ratio nats_r3_single nats_r1_single)" \
    "$(tr ' ' '\n' <<<"${cpu[nats_r1_single]}" | grep . | stats)" "$(tr ' ' '\n' <<<"${cpu[nats_r3_single]}" | grep . | stats)"
fi
if [ -n "${rate[rf3_batch]:-}" ] && [ -n "${rate[rf1_batch]:-}" ]; then
  printf '%-52s %s of 1 copy\n' "3 copies, batch produce of 100" "$(ratio rf3_batch rf1_batch)"
fi
# SQS against /v1 in the same rounds: throughput and the node's CPU.
for f in send1 send10 recv1 recv10; do
  [ -n "${rate[sqs_$f]:-}" ] || continue
  printf '%-52s %s of /v1; node CPU µs/msg, /v1 %s, SQS %s\n' "SQS $f" "$(ratio "sqs_$f" "native_$f")" \
    "$(tr ' ' '\n' <<<"${cpu[native_$f]}" | grep . | stats)" "$(tr ' ' '\n' <<<"${cpu[sqs_$f]}" | grep . | stats)"
done
# Narad's single-record produce against the ceiling of the same rounds.
for n in 16 64; do
  [ -n "${rate[single$n]:-}" ] && [ -n "${rate[ceiling$n]:-}" ] || continue
  a=$(tr ' ' '\n' <<<"${rate[single$n]}" | grep . | stats | cut -d' ' -f1)
  c=$(tr ' ' '\n' <<<"${rate[ceiling$n]}" | grep . | stats | cut -d' ' -f1)
  printf '%-52s %s%%\n' "single-record produce, $n clients, of the ceiling" "$(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.0f", 100 * a / c }')"
done
