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
# With --slurm, the same demo on a real Slurm: starts (or reuses) the single-machine Slurm
# lab of scripts/slurm-lab.sh (root; 4 emulated nodes x 8 fake GPUs by default), starts
# `airtime server --backend slurm` on it (data: out/live-slurm/), and besides the above
# shows `squeue` (airtime's jobs, running or parked, with airtime's explanation in each
# job's comment) and the GPU indices Slurm gave each running job (docs/slurm.md).
#
# Usage: scripts/live-demo.sh [--slurm]          start (or reuse) the server and submit the demo
#        scripts/live-demo.sh [--slurm] --stop   cancel the active workloads, wait for their
#                                                processes (Slurm jobs) to end, stop the
#                                                server (and, with --slurm, the lab)
#        scripts/live-demo.sh [--slurm] --fresh  --stop, delete the data directory, then
#                                                start anew
# Environment:
#   AIRTIME_BIN        the airtime binary (default: <build folder>/src/airtime/cli/airtime,
#                      built with scripts/build.sh RelWithDebInfo when missing)
#   AIRTIME_BUILD_DIR  build folder (default: build/)
#   AIRTIME_DEMO_GPUS  auto (default: real GPUs when nvidia-smi lists any, else 8xH100),
#                      nvml (this host's GPUs), or a --fake-gpus spec such as 8xH100
#   AIRTIME_DEMO_WAIT  seconds to watch after submitting (default: 20)
#   AIRTIME_SLURM_DIR, AIRTIME_SLURM_PORT, AIRTIME_SLURM_NODES, AIRTIME_SLURM_GPUS
#                      with --slurm: the lab's directory, port and size (scripts/slurm-lab.sh;
#                      default /tmp/airtime-slurm-lab, 6817, 4 nodes, 8 GPUs per node)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -n "${AIRTIME_BIN:-}" ]]; then
  bin="$(realpath "$AIRTIME_BIN")"  # before the cd below
fi
cd "$root"
build_dir="${AIRTIME_BUILD_DIR:-$root/build}"
gpus="${AIRTIME_DEMO_GPUS:-auto}"
wait_s="${AIRTIME_DEMO_WAIT:-20}"
mode=start
backend=local
for arg in "$@"; do
  case "$arg" in
    --slurm) backend=slurm ;;
    --stop | --fresh) mode="$arg" ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "live-demo.sh: unknown argument '$arg' (expected --slurm, --stop, --fresh or nothing)" >&2
      exit 2
      ;;
  esac
done
data="$root/out/live"
lab="${AIRTIME_SLURM_DIR:-${TMPDIR:-/tmp}/airtime-slurm-lab}"  # slurm-lab.sh's default
if [[ "$backend" == slurm ]]; then
  data="$root/out/live-slurm"
  if [[ -n "${AIRTIME_DEMO_GPUS:-}" ]]; then
    echo "live-demo.sh: AIRTIME_DEMO_GPUS does not apply with --slurm (the GPUs are Slurm's;" \
      "size the lab with AIRTIME_SLURM_NODES and AIRTIME_SLURM_GPUS)" >&2
    exit 2
  fi
fi
this=scripts/live-demo.sh  # how to call this script again, for the messages
[[ "$backend" == slurm ]] && this+=" --slurm"

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

# Points the CLI at the server of the data directory (its address and admin token files).
use_server() {
  [[ -s "$data/address" && -s "$data/tokens" ]] || return 1
  AIRTIME_ADDR="$(cat "$data/address")"
  AIRTIME_TOKEN="$(awk '$1 == "admin" { print $2; exit }' "$data/tokens")"
  export AIRTIME_ADDR AIRTIME_TOKEN
}

server_answers() { use_server && airtime ls --limit 1 >/dev/null 2>&1; }

# The Slurm lab's client settings (SLURM_CONF, SLURMRESTD_URL, SLURM_REST_USER,
# SLURM_REST_TOKEN), from the env.sh its start wrote; fails when there is none.
use_lab() {
  [[ -s "$lab/env.sh" ]] || return 1
  # shellcheck source=/dev/null  # written by scripts/slurm-lab.sh start
  . "$lab/env.sh"
}

# How many of the demo's workload processes still run: local runs that started a process
# and have no exit file while their shim lives (the run-directory protocol of
# docs/server.md); under Slurm, airtime's jobs that Slurm lists as running or ending.
processes_left() {
  local left=0 claim kind pid
  if [[ "$backend" == slurm ]]; then
    use_lab || { echo 0; return; }
    timeout 5 squeue -h -t RUNNING,COMPLETING,CONFIGURING -o %j 2>/dev/null |
      grep -c '^airtime\.' || true
    return
  fi
  for claim in "$data"/runs/*/claim; do
    [[ -f "$claim" ]] || continue
    read -r kind pid _ <"$claim" || continue
    [[ "$kind" == started && ! -f "$(dirname "$claim")/exit" ]] || continue
    kill -0 "$pid" 2>/dev/null && left=$((left + 1))
  done
  echo "$left"
}

# Waits (up to 30 s) until no workload process runs.
wait_for_processes() {
  local deadline=$((SECONDS + 30)) left where="see ${data#"$root"/}/runs/"
  [[ "$backend" == slurm ]] && where="squeue, with SLURM_CONF=$lab/slurm.conf"
  while :; do
    left="$(processes_left)"
    ((left == 0)) && return 0
    if ((SECONDS >= deadline)); then
      say "$left workload process(es) still running after 30 s ($where)"
      return 0
    fi
    sleep 1
  done
}

# Starts the server in the background with GPUs `$1` (nvml, slurm: the lab's, or a
# --fake-gpus spec); sets $pid and waits until it answers.
start_server() {
  local gpu_args=() gpu_text="(this host's GPUs, through NVML)"
  if [[ "$1" == slurm ]]; then
    # The token stays in the environment (SLURM_REST_TOKEN): ps shows flags.
    gpu_args=(--backend slurm --slurm-url "$SLURMRESTD_URL" --slurm-conf "$SLURM_CONF")
    gpu_text="${gpu_args[*]}"
  elif [[ "$1" != nvml ]]; then
    gpu_args=(--fake-gpus "$1")
    gpu_text="--fake-gpus $1"
  fi
  rm -f "$data/address"
  touch "$data/server.log"
  log_from=$(($(wc -l <"$data/server.log") + 1))  # this start's lines
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
  if [[ "$backend" == slurm ]]; then
    say "stopping the Slurm lab in $lab"
    AIRTIME_SLURM_DIR="$lab" scripts/slurm-lab.sh stop | sed 's/^/  /'
  fi
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
if [[ "$backend" == slurm ]]; then
  say "starting the Slurm lab: scripts/slurm-lab.sh start (AIRTIME_SLURM_DIR=$lab)"
  AIRTIME_SLURM_DIR="$lab" scripts/slurm-lab.sh start | sed 's/^/  /'
  use_lab || { say "the lab wrote no $lab/env.sh" >&2; exit 1; }
fi
if pid="$(our_server_pid)" && server_answers; then
  say "reusing the running server (pid $pid) at $AIRTIME_ADDR"
elif server_answers; then
  pid=""
  say "reusing the server that answers at $AIRTIME_ADDR (not started by this script)"
else
  if [[ "$backend" == slurm ]]; then
    gpus=slurm
  elif [[ "$gpus" == auto ]]; then
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
  tail -n "+$log_from" "$data/server.log" | sed 's/^/  /'
fi

# ---------------------------------------------------------------- the workloads
echo
say "airtime submit examples/live/demo.yaml"
if ! out="$(airtime submit examples/live/demo.yaml 2>&1)"; then
  if grep -q "already taken" <<<"$out"; then
    say "the demo's workloads were submitted to this server before (names are unique);" \
      "showing them. For a new round: $this --fresh"
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
if [[ "$backend" == slurm ]]; then
  echo
  say "squeue: airtime's jobs (held: parked by a requeue until the workload's next start; the" \
    "comment is airtime's explanation)"
  squeue --sort=i -o '%.6i %.26j %.8T %.8M %.5N %.16b %.14r  %k' | sed 's/^/  /'
  echo
  say "the GPUs Slurm gave each running job (scontrol -d show job) against airtime's record"
  # Slurm picks the indices; airtime adopts them at its next poll (every 200 ms): a job that
  # started since may differ once, so one more look a second later.
  if ! python3 scripts/slurm-job-gpus.py "$bin" >/dev/null 2>&1; then sleep 1; fi
  python3 scripts/slurm-job-gpus.py "$bin" | sed 's/^/  /' || true
fi
echo
say "airtime gpus"
airtime gpus | sed 's/^/  /'
echo
say "airtime ledger"
airtime ledger | sed 's/^/  /'

rel="${bin#"$root"/}"
d="${data#"$root"/}"
logs="$d/runs/<run>/stdout.log, stderr.log, shim.log   (server: $d/server.log)"
stop_text="cancels the workloads, then stops the server"
if [[ "$backend" == slurm ]]; then
  logs="$d/runs/<run>/stdout.log (the job's stdout and stderr; a requeued job's later runs"
  logs+=" append to its first run's)   (server: $d/server.log)"
  stop_text="cancels the workloads, stops the server, then the Slurm lab"
fi
cat <<EOF

live-demo: the server keeps running${pid:+ (pid $pid)}. Where to look:
  dashboard    http://$AIRTIME_ADDR/   (it asks for a token: the admin token of $d/tokens; docs/dashboard.md)
  API          http://$AIRTIME_ADDR/v1/workloads   (Authorization: Bearer <admin token of $d/tokens>; docs/api.md)
  metrics      http://$AIRTIME_ADDR/metrics   health: http://$AIRTIME_ADDR/healthz
  process logs $logs
  checkpoints  $d/checkpoints/<workload id>/
  the CLI      export AIRTIME_ADDR=$AIRTIME_ADDR AIRTIME_TOKEN=\$(awk '\$1=="admin"{print \$2}' $d/tokens)
               $rel top          (live view; Ctrl-C quits)
               $rel describe live-chat    $rel events live-train    $rel logs -f live-train
EOF
if [[ "$backend" == slurm ]]; then
  cat <<EOF
  Slurm        source $lab/env.sh   (SLURM_CONF and slurmrestd's URL, user and token)
               squeue -o '%i %j %T %N %b %k'    scontrol -d show job <id>   (GRES=...(IDX:...): Slurm's GPU indices)
               sinfo -N -o '%N %T %G'    python3 scripts/slurm-job-gpus.py $rel   (Slurm's GPUs against airtime's)
               Slurm's logs: $lab/log/ (jobcomp.txt: each job's start and end); docs/slurm.md
EOF
fi
cat <<EOF
  stop         $this --stop   ($stop_text)
EOF
if [[ -n "$pid" ]]; then
  echo "               or kill $pid   (the server only: its workload processes keep running and the next start adopts them)"
fi
