#!/usr/bin/env bash
# The real-GPU check of the live control plane: run once on a machine with an NVIDIA GPU
# (written for the H200 machine the device tool lends), from the repository root.
#
# It starts `airtime server` on the real GPUs (NVML through dlopen), then shows, with the
# output of `airtime gpus|ls|describe|ledger`, nvidia-smi and /metrics at each step:
#   1. the NVML inventory (model, UUID, memory, MIG mode) and telemetry;
#   2. MPS sharing: two PyTorch jobs of gpu_fraction 0.5 on one GPU, each an MPS client of
#      the daemon's private MPS server (thread percentage and pinned memory limit set);
#   3. a checkpointing PyTorch training job, then a high-value realtime service and a
#      quantization burst arriving: placement, and preemption (SIGTERM, grace, checkpoint,
#      "resumed from step K" when it runs again);
#   4. kill -9 of the daemon while work runs, a restart, and the adoption of the processes;
#   5. the service cancelled: the quantization burst runs, then the training resumes.
# Everything goes to OUTDIR/h200-run.txt (and the server log beside it).
#
# Usage: scripts/device/h200-check.sh [OUTDIR]     (default $OUT or out/h200)
#   AIRTIME_BIN=PATH   the airtime binary; default out/device/bin/airtime (see bundle.sh,
#                      with its libraries in out/device/lib), else build/src/airtime/cli/airtime
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${1:-${OUT:-out/h200}}"
mkdir -p "$out"
report="$out/h200-run.txt"
: >"$report"
bin="${AIRTIME_BIN:-}"
if [[ -z "$bin" && -x out/device/bin/airtime ]]; then
  bin="$root/out/device/bin/airtime"
  export LD_LIBRARY_PATH="$root/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
bin="${bin:-$root/build/src/airtime/cli/airtime}"
data="$(mktemp -d /tmp/airtime-h200-XXXXXX)"

say() { echo "== $*" | tee -a "$report"; }
show() {
  echo "\$ $*" >>"$report"
  "$@" >>"$report" 2>&1
  echo >>"$report"
}
cli() { show "$bin" "$@"; }
start_server() {
  rm -f "$data/address"
  # Admin token only; workloads as this script's user (docs/server.md, "Trust model").
  "$bin" server --data "$data" --listen 127.0.0.1:0 --isolation off >>"$out/server.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do [[ -s "$data/address" ]] && break; sleep 0.1; done
  export AIRTIME_ADDR="$(cat "$data/address")"
  export AIRTIME_TOKEN="$(awk '$1=="admin"{print $2}' "$data/tokens")"
  tail -n 3 "$out/server.log" | tee -a "$report"
}
wait_state() {  # NAME STATE SECONDS
  for _ in $(seq $(($3 * 2))); do
    "$bin" describe "$1" --json 2>/dev/null | grep -q "\"state\": *\"$2\"" && return 0
    sleep 0.5
  done
  return 1
}
metrics() { show sh -c "curl -s http://$AIRTIME_ADDR/metrics | grep -E '^airtime_(gpu|workload|allocated|utilized)' | head -40"; }

say "machine"
show nvidia-smi
show nvidia-smi --query-gpu=name,uuid,memory.total,mig.mode.current --format=csv
show python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
say "1. the daemon on the real GPUs (NVML)"
start_server
cli gpus
sleep 3
cli gpus --json

say "2. MPS sharing: two gpu_fraction 0.5 PyTorch jobs on one GPU"
cli submit examples/gpu/h200.yaml
sleep 8
cli ls --all
cli gpus
show nvidia-smi
metrics
wait_state gpu-embed-a succeeded 120
wait_state gpu-embed-b succeeded 60
cli describe gpu-embed-a
show sh -c "cat $data/runs/*/stdout.log"

say "3. training, then a high-value service and a quantization burst arrive"
cli submit examples/gpu/h200-train.yaml
sleep 30
cli gpus
cli describe gpu-train
cli submit examples/gpu/h200-serve.yaml
sleep 45
cli ls --all
cli gpus
cli describe gpu-train
cli describe gpu-chat
cli describe gpu-quantize
metrics

say "4. kill -9 of the daemon while work runs, then a restart"
cli ls
cli ledger
kill -9 "$server"
sleep 2
show sh -c "ps -eo pid,sess,args | grep -E 'torch_job|_shim' | grep -v grep"
start_server
cli ls --all
cli describe gpu-train

say "5. the service leaves: the quantization burst runs, then the training resumes"
cli cancel gpu-chat
wait_state gpu-quantize succeeded 90
wait_state gpu-train running 60
sleep 15
cli ls --all
cli describe gpu-train
show sh -c "grep -h -E 'resumed|stopped|finished|quantized' $data/runs/*/stdout.log"

say "ledger and the end"
cli ledger
for w in gpu-chat gpu-train gpu-quantize; do "$bin" cancel "$w" >/dev/null 2>&1; done
sleep 35
cli ls --all
show sh -c "for d in $data/runs/*; do echo \"-- \$d\"; cat \$d/stdout.log \$d/stderr.log 2>/dev/null | tail -5; done"
kill "$server"
wait "$server" 2>/dev/null
echo quit | CUDA_MPS_PIPE_DIRECTORY="$data/mps/pipe" nvidia-cuda-mps-control >/dev/null 2>&1
cp "$out/server.log" "$out/server.log.txt" 2>/dev/null
say "done: $report"
