#!/usr/bin/env bash
# The live control plane on this machine: installs what is missing, builds, starts
# `airtime server` on this host's GPUs when nvidia-smi lists any, else on 8 simulated H100s
# (or reuses the server this script started before), submits the four workloads
# of examples/live/demo.yaml (a realtime service that scales on its own metrics, batch
# inference, checkpointing training, a quantization burst; python3 standard library only),
# shows `airtime ls` for about 20 s, then `airtime gpus` and `airtime ledger`, and prints
# where to look next. No GPU is needed. The server keeps running in the background; its
# data directory is out/live/ (docs/server.md).
#
# Usage: scripts/live-demo.sh            start (or reuse) the server and submit the demo
#        scripts/live-demo.sh --stop     cancel the active workloads, wait for their
#                                        processes to end, stop the server
#        scripts/live-demo.sh --fresh    --stop, delete out/live/, then start anew
# Environment:
#   AIRTIME_BIN        the airtime binary (default: <build folder>/src/airtime/cli/airtime,
#                      built with scripts/build.sh RelWithDebInfo when missing)
#   AIRTIME_BUILD_DIR  build folder (default: build/)
#   AIRTIME_DEMO_GPUS  auto (default: real GPUs when nvidia-smi lists any, else 8xH100),
#                      nvml (this host's GPUs), or a --fake-gpus spec such as 8xH100
#   AIRTIME_DEMO_WAIT  seconds to watch after submitting (default: 20)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -n "${AIRTIME_BIN:-}" ]]; then
  bin="$(realpath "$AIRTIME_BIN")"  # before the cd below
fi
cd "$root"
build_dir="${AIRTIME_BUILD_DIR:-$root/build}"
data="$root/out/live"
gpus="${AIRTIME_DEMO_GPUS:-auto}"
wait_s="${AIRTIME_DEMO_WAIT:-20}"
mode="${1:-start}"
case "$mode" in
  start | --stop | --fresh) ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "live-demo.sh: unknown argument '$mode' (expected --stop, --fresh or nothing)" >&2
    exit 2
    ;;
esac

say() { echo "live-demo: $*"; }

if [[ "$mode" != --stop ]]; then
  scripts/install-deps.sh  # quick when everything is there; python3 runs the workloads
fi
if [[ -z "${bin:-}" ]]; then
  bin="$build_dir/src/airtime/cli/airtime"
  if [[ ! -x "$bin" ]]; then
    say "no binary at ${bin#"$root"/}: building it"
    AIRTIME_BUILD_DIR="$build_dir" scripts/build.sh RelWithDebInfo
  fi
fi
if [[ ! -x "$bin" ]]; then
  say "no airtime binary at $bin" >&2
  exit 1
fi
airtime() { "$bin" "$@"; }

# The pid of the server this script started, when it still runs (checked against pid reuse).
our_server_pid() {
  local pid
  pid="$(cat "$data/server.pid" 2>/dev/null)" || return 1
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q " server --data $data " || return 1
  echo "$pid"
}

# Points the CLI at the server of out/live (its address and admin token files).
use_server() {
  [[ -s "$data/address" && -s "$data/tokens" ]] || return 1
  AIRTIME_ADDR="$(cat "$data/address")"
  AIRTIME_TOKEN="$(awk '$1 == "admin" { print $2; exit }' "$data/tokens")"
  export AIRTIME_ADDR AIRTIME_TOKEN
}

server_answers() { use_server && airtime ls --limit 1 >/dev/null 2>&1; }

# Waits (up to 30 s) until every run that started a process has its exit file, or its shim
# is gone: the run-directory protocol of docs/server.md.
wait_for_processes() {
  local deadline=$((SECONDS + 30)) left claim pid
  while :; do
    left=0
    for claim in "$data"/runs/*/claim; do
      [[ -f "$claim" ]] || continue
      read -r kind pid _ <"$claim" || continue
      [[ "$kind" == started && ! -f "$(dirname "$claim")/exit" ]] || continue
      kill -0 "$pid" 2>/dev/null && left=$((left + 1))
    done
    ((left == 0)) && return 0
    if ((SECONDS >= deadline)); then
      say "$left workload process(es) still running after 30 s (see $data/runs/)"
      return 0
    fi
    sleep 1
  done
}

# Starts the server in the background with GPUs `$1` (nvml, or a --fake-gpus spec); sets
# $pid and waits until it answers.
start_server() {
  local gpu_args=() gpu_text="(this host's GPUs, through NVML)"
  if [[ "$1" != nvml ]]; then
    gpu_args=(--fake-gpus "$1")
    gpu_text="--fake-gpus $1"
  fi
  rm -f "$data/address"
  say "starting: ${bin#"$root"/} server --data ${data#"$root"/} --listen 127.0.0.1:0" \
    "$gpu_text  (log: ${data#"$root"/}/server.log)"
  # Its own session: the server outlives this script and the terminal. The demo's load runs
  # six times faster than its trace (one trace minute per 10 s), so the policy's one-hour
  # scale-down window (docs/policies.md, "Scaling down waits") is shortened in proportion.
  # The demo's tenants have no users of their own: its workloads run as this script's user
  # (docs/server.md, "Trust model"); only the admin token is used.
  setsid "$bin" server --data "$data" --listen 127.0.0.1:0 --policy airtime:keep=10m \
    --isolation off "${gpu_args[@]}" \
    >>"$data/server.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$data/server.pid"
  for _ in $(seq 150); do
    [[ -s "$data/address" ]] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      say "the server exited; its log:" >&2
      cat "$data/server.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  if ! server_answers; then
    say "the server did not answer within 30 s; its log:" >&2
    cat "$data/server.log" >&2
    exit 1
  fi
  for _ in $(seq 20); do  # its two start-up lines follow the address file
    tail -n 1 "$data/server.log" | grep -q "listening on" && break
    sleep 0.1
  done
}

stop_demo() {
  local pid ids
  if server_answers; then
    ids="$(airtime ls --json | python3 -c 'import json, sys
print(" ".join(str(w["id"]) for w in json.load(sys.stdin)["workloads"]))')"
    # A workload may end on its own between the listing and its cancel ("has already
    # succeeded"): the message is shown, and the stop goes on.
    for id in $ids; do airtime cancel "$id" 2>&1 | sed "s/^/  /" || true; done
    say "waiting for the workload processes to stop (SIGTERM, then SIGKILL after preempt_grace)"
    wait_for_processes
  fi
  if pid="$(our_server_pid)"; then
    say "stopping the server (pid $pid)"
    kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  elif server_answers; then
    say "a server answers at $AIRTIME_ADDR but this script did not start it; stop it yourself"
  fi
  rm -f "$data/server.pid"
}

if [[ "$mode" == --stop ]]; then
  stop_demo
  exit 0
fi
if [[ "$mode" == --fresh ]]; then
  stop_demo
  say "removing ${data#"$root"/}/"
  rm -rf "$data"
fi

# ---------------------------------------------------------------- the server
mkdir -p "$data"
if pid="$(our_server_pid)" && server_answers; then
  say "reusing the running server (pid $pid) at $AIRTIME_ADDR"
elif server_answers; then
  pid=""
  say "reusing the server that answers at $AIRTIME_ADDR (not started by this script)"
else
  if [[ "$gpus" == auto ]]; then
    gpus=8xH100
    if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then gpus=nvml; fi
  fi
  start_server "$gpus"
  if [[ "${AIRTIME_DEMO_GPUS:-auto}" == auto && "$gpus" == nvml ]] &&
    tail -n 2 "$data/server.log" | grep -q "^airtime server: 0 GPU(s)"; then
    say "NVML gave no GPU airtime can use: starting on simulated GPUs instead"
    kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    start_server 8xH100
  fi
  sed -n 's/^/  /p' "$data/server.log" | tail -n 2
fi

# ---------------------------------------------------------------- the workloads
echo
say "airtime submit examples/live/demo.yaml"
if ! out="$(airtime submit examples/live/demo.yaml 2>&1)"; then
  if grep -q "already taken" <<<"$out"; then
    say "the demo's workloads were submitted to this server before (names are unique);" \
      "showing them. For a new round: scripts/live-demo.sh --fresh"
  else
    echo "$out" >&2
    exit 1
  fi
else
  printf '  %s\n' "${out//$'\n'/$'\n'  }"
fi

start=$SECONDS
while :; do
  echo
  say "t+$((SECONDS - start))s: airtime ls"
  airtime ls --all | sed 's/^/  /'
  ((SECONDS - start + 5 > wait_s)) && break
  sleep 5
done
echo
say "airtime gpus"
airtime gpus | sed 's/^/  /'
echo
say "airtime ledger"
airtime ledger | sed 's/^/  /'

rel="${bin#"$root"/}"
cat <<EOF

live-demo: the server keeps running${pid:+ (pid $pid)}. Where to look:
  API          http://$AIRTIME_ADDR/v1/workloads   (Authorization: Bearer <admin token of out/live/tokens>; docs/api.md)
  metrics      http://$AIRTIME_ADDR/metrics   health: http://$AIRTIME_ADDR/healthz
  process logs out/live/runs/<run>/stdout.log, stderr.log, shim.log   (server: out/live/server.log)
  checkpoints  out/live/checkpoints/<workload id>/
  the CLI      export AIRTIME_ADDR=$AIRTIME_ADDR AIRTIME_TOKEN=\$(awk '\$1=="admin"{print \$2}' out/live/tokens)
               $rel top          (live view; Ctrl-C quits)
               $rel describe live-chat    $rel describe live-train
  stop         scripts/live-demo.sh --stop   (cancels the workloads, then stops the server)
EOF
if [[ -n "$pid" ]]; then
  echo "               or kill $pid   (the server only: its workload processes keep running and the next start adopts them)"
fi
