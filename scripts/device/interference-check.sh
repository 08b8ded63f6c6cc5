#!/usr/bin/env bash
# Interference between co-located training workloads on a real GPU: run once on a machine
# with an NVIDIA GPU and PyTorch (written for the H200 machine the device tool lends), from
# the repository root. It builds nothing.
#
# airtime's interference model (src/airtime/model/interference.h) says that a workload of
# family a sharing its GPU with one of family b runs at factor(a, b) of the speed its fraction
# alone would give; the table (src/airtime/model/interference_gavel.inc) is derived from
# Gavel's V100 measurements. This measures the same on this GPU with examples/gpu/colocate.py
# (ResNet-50, Recommendation, Transformer and LM training on synthetic data), every process a
# client of a private MPS server, as airtime's fractional workloads are:
#   1. each model alone with no thread limit (the whole GPU; an MPS client too, unlike
#      airtime's whole-GPU work, so that only the limit changes), and alone with
#      CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 (what airtime sets for gpu_fraction: 0.5);
#   2. each unordered pair of models, same-model pairs too (10), both sides at 50% and
#      started together, measuring the same wall-clock window (colocate.py --start-at);
#   3. the tables: per pair and side, factor = paired / alone@50 beside the table's factor,
#      and Gavel's T = paired_a/alone@100_a + paired_b/alone@100_b; per model, alone@50 over
#      alone@100 (what half the threads give).
# It never changes MIG, the compute mode or clocks, and never resets the GPU. If the MPS
# daemon cannot start, or a first CUDA process fails under it, only the whole-GPU alone runs
# are made: without MPS the thread limit does nothing and a pair would time-slice the GPU,
# which is not what airtime's sharing does.
#
# Time: 18 runs of about 20 s, 6-7 minutes. Every process has a timeout; a failed run is
# recorded as such and the rest goes on; a run that would end past BUDGET_S is skipped.
#
# Output in OUTDIR: runs.jsonl (a JSON line per process: colocate.py's, or a failed or skipped
# run), interference.txt (machine, MPS, each run, the tables; the tables also go to stdout),
# interference.csv (the measured factors as a table `airtime sim --interference FILE`
# reads: family,other,factor with each side of each measured pair, capped at 1),
# logs/ (each process's output), mps-*.log (the MPS daemon's logs).
#
# Usage: scripts/device/interference-check.sh [OUTDIR]     (default $OUT or out/interference)
#   WARMUP_S=3 MEASURE_S=7   seconds (whole) of warm-up and of the measure window, per run
#   LEAD_S=12                seconds from launching a pair to its common start (covers the
#                            start of Python, CUDA and the model)
#   BUDGET_S=420             no run starts that would end past this many seconds
#   PYTHON=python3           the interpreter with PyTorch
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 1
out="${1:-${OUT:-out/interference}}"
mkdir -p "$out/logs"
runs="$out/runs.jsonl"
report="$out/interference.txt"
: >"$runs"
: >"$report"
py="${PYTHON:-python3}"
warmup="${WARMUP_S:-3}"
measure="${MEASURE_S:-7}"
lead="${LEAD_S:-12}"
budget="${BUDGET_S:-420}"
# The pairs run in this order, so those that airtime's table says interfere (any pair with
# ResNet-50, and Recommendation with itself) come first should the budget cut the last ones.
models=(resnet50 recommendation transformer lm)

say() { echo "== $*" | tee -a "$report"; }
show() {
  {
    echo "\$ $*"
    "$@" 2>&1
    echo
  } >>"$report"
}
# fits SECONDS: whether a run that long would still end within the budget.
fits() { ((SECONDS + $1 <= budget)); }
# skip TAG MODEL WHY: records a run not made.
skip() {
  printf '{"model": "%s", "tag": "%s", "skipped": "%s"}\n' "$2" "$1" "$3" >>"$runs"
  say "$1 $2: skipped ($3)"
}
# launch TAG MODEL PCT LOG LIMIT [START_AT]: colocate.py in the background ($! is its pid),
# at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=PCT (100: no limit), killed after LIMIT seconds.
launch() {
  local tag=$1 model=$2 pct=$3 log=$4 limit=$5 start_at=${6:-}
  (
    if ((pct < 100)); then export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="$pct"; fi
    exec timeout -k 5 "$limit" "$py" examples/gpu/colocate.py --model "$model" \
      --warmup "$warmup" --seconds "$measure" ${start_at:+--start-at "$start_at"} \
      --tag "$tag" --out "$runs"
  ) </dev/null >"$log" 2>&1 &
}
# collect PID TAG MODEL LOG: waits for a launched run; a failure goes to runs.jsonl as such.
collect() {
  local pid=$1 tag=$2 model=$3 log=$4 rc why=""
  wait "$pid"
  rc=$?
  if ((rc == 0)); then
    say "$tag $model: $(grep -o '"samples_per_s": [0-9.]*' "$log" | tail -n 1 | cut -d' ' -f2)" \
      "samples/s"
    return
  fi
  printf '{"model": "%s", "tag": "%s", "failed": true, "rc": %d, "log": "%s"}\n' \
    "$model" "$tag" "$rc" "$log" >>"$runs"
  ((rc == 124 || rc == 137)) && why=" (timed out)"
  say "$tag $model: FAILED, exit $rc$why; the end of $log:"
  tail -n 5 "$log" | tee -a "$report"
}

say "machine"
show nvidia-smi -L
show nvidia-smi --query-gpu=name,driver_version,mig.mode.current,compute_mode,memory.total \
  --format=csv
show "$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

say "MPS: a private control daemon"
CUDA_MPS_PIPE_DIRECTORY="$(mktemp -d /tmp/airtime-mps-pipe-XXXXXX)"
CUDA_MPS_LOG_DIRECTORY="$(mktemp -d /tmp/airtime-mps-log-XXXXXX)"
export CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
# Set in the daemon's environment it would become every client's default; each run sets its own.
unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
stop_mps() {
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
  for f in "$CUDA_MPS_LOG_DIRECTORY"/*.log; do
    [[ -f "$f" ]] && cp "$f" "$out/mps-$(basename "$f")"
  done
}
trap 'exit 130' INT TERM
mps=0
if ! nvidia-cuda-mps-control -d >>"$report" 2>&1; then
  say "the control daemon did not start (see above)"
else
  trap stop_mps EXIT
  # A first client starts the MPS server; one that cannot run under it would fail every run.
  if timeout 60 "$py" -c "import torch; torch.ones(1, device='cuda').sum().item()" \
    >>"$report" 2>&1; then
    mps=1
    say "started; a CUDA process ran as a client; its servers:"
    show sh -c 'echo get_server_list | nvidia-cuda-mps-control'
  else
    say "the daemon started but a CUDA process failed under it (see above): MPS stopped"
    stop_mps
    trap - EXIT
  fi
fi
if ((!mps)); then
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  say "NO MPS: only the alone runs on the whole GPU are made; the 50% runs and the pairs are" \
    "skipped (without MPS the thread limit does nothing, and a pair would time-slice the GPU)"
fi

say "1. each model alone: no thread limit, then CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50"
for m in "${models[@]}"; do
  for pct in 100 50; do
    tag="alone$pct"
    if ((pct < 100 && !mps)); then skip "$tag" "$m" "no MPS"; continue; fi
    if ! fits $((12 + warmup + measure)); then skip "$tag" "$m" "time budget"; continue; fi
    log="$out/logs/$tag-$m.log"
    launch "$tag" "$m" "$pct" "$log" $((40 + warmup + measure))
    collect $! "$tag" "$m" "$log"
  done
done

say "2. pairs, both sides at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50, one measure window"
first=1
for ((i = 0; i < ${#models[@]}; i++)); do
  for ((j = i; j < ${#models[@]}; j++)); do
    a=${models[i]} b=${models[j]}
    tag="pair:$a+$b"
    if ((!mps)); then
      skip "$tag" "$a" "no MPS: would time-slice"
      skip "$tag" "$b" "no MPS: would time-slice"
      continue
    fi
    if ! fits $((lead + warmup + measure + 3)); then
      skip "$tag" "$a" "time budget"
      skip "$tag" "$b" "time budget"
      continue
    fi
    log_a="$out/logs/pair-$a-$b-1.log" log_b="$out/logs/pair-$a-$b-2.log"
    start_at=$(($(date +%s) + lead))
    launch "$tag" "$a" 50 "$log_a" $((lead + warmup + measure + 25)) "$start_at"
    pid_a=$!
    launch "$tag" "$b" 50 "$log_b" $((lead + warmup + measure + 25)) "$start_at"
    pid_b=$!
    if ((first)); then
      # Once, during the warm-up (not the window): both should show as MPS clients (M+C).
      wait_s=$((start_at + warmup / 2 - $(date +%s)))
      ((wait_s > 0)) && sleep "$wait_s"
      show nvidia-smi
      show sh -c 'echo get_server_list | nvidia-cuda-mps-control'
      first=0
    fi
    collect "$pid_a" "$tag" "$a" "$log_a"
    collect "$pid_b" "$tag" "$b" "$log_b"
  done
done

say "3. interference measured against airtime's table ($SECONDS s in all)"
"$py" - "$runs" src/airtime/model/interference_gavel.inc "$out/interference.csv" "${models[@]}" \
  <<'EOF' | tee -a "$report"
import json
import re
import sys

runs_path, inc_path, csv_path, models = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
FAMILY = {"resnet50": "ResNet-50", "transformer": "Transformer", "lm": "LM",
          "recommendation": "Recommendation"}
inc = open(inc_path).read()
table = {}  # symmetric: the file lists each pair once
for a, b, f in re.findall(r'\{"([^"]+)", "([^"]+)", ([0-9.]+)\}', inc):
    table[a, b] = table[b, a] = float(f)
default = float(re.search(r"AIRTIME_INTERFERENCE_DEFAULT ([0-9.]+)", inc).group(1))

done, notes = {}, []  # tag -> the runs that measured; what went wrong
for line in open(runs_path):
    r = json.loads(line)
    if "samples_per_s" in r:
        done.setdefault(r["tag"], []).append(r)
        if r["late_s"] > 0:
            notes.append(f"{r['tag']} {r['model']}: ready {r['late_s']} s after the common "
                         "start (raise LEAD_S)")
    else:
        notes.append(f"{r['tag']} {r['model']}: " +
                     (f"skipped ({r['skipped']})" if "skipped" in r else
                      f"failed, exit {r['rc']}, see {r['log']}"))


def alone(pct, m):
    return next((r for r in done.get(f"alone{pct}", []) if r["model"] == m), None)


def speed(r):
    return r["samples_per_s"] if r else None


def ratio(x, y):
    return x / y if x is not None and y else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


print("Alone: samples/s with no thread limit (@100) and at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50,"
      "\nand the SM count each process saw.")
print(f"{'model':<16}{'alone@100':>12}{'alone@50':>12}{'@50/@100':>10}{'SMs@100':>9}{'SMs@50':>8}")
halves = []
for m in models:
    full, half = alone(100, m), alone(50, m)
    halves.append(ratio(speed(half), speed(full)))
    print(f"{m:<16}{fmt(speed(full), '.1f'):>12}{fmt(speed(half), '.1f'):>12}"
          f"{fmt(halves[-1], '.3f'):>10}{fmt(full and full['sm_count'], 'd'):>9}"
          f"{fmt(half and half['sm_count'], 'd'):>8}")
if halves and all(h is not None and h > 0.97 for h in halves):
    notes.append("no model slowed down at 50% of the threads: did the runs go through MPS? "
                 "(see get_server_list and nvidia-smi above)")

print("\nPairs, both sides at 50%. factor = paired / alone@50, what airtime's model calls the"
      "\nspeed factor; table = airtime's factor for the two families (Gavel, V100); T = the sum"
      "\nover both sides of paired / alone@100, Gavel's measure (the table holds min(1, T) of"
      "\nGavel's); overlap = the share of the longer measure window the two had in common.")
print(f"{'pair':<30}{'side':<16}{'paired':>10}{'alone@50':>10}{'factor':>8}{'table':>7}"
      f"{'T':>7}{'overlap':>9}")
measured = {}  # (a, b) -> (a's factor, b's factor), for the CSV below
for i, a in enumerate(models):
    for b in models[i:]:
        rs = done.get(f"pair:{a}+{b}", [])
        ra = next((r for r in rs if r["model"] == a), None)
        rb = next((r for r in rs if r["model"] == b and r is not ra), None)
        if not (ra and rb):  # one side alone is no pair: its partner failed (see the notes)
            ra = rb = None
        t = None
        ta, tb = ratio(speed(ra), speed(alone(100, a))), ratio(speed(rb), speed(alone(100, b)))
        if ta is not None and tb is not None:
            t = ta + tb
        overlap = None
        if ra and rb:
            (s1, e1), (s2, e2) = ra["window"], rb["window"]
            overlap = max(0.0, min(e1, e2) - max(s1, s2)) / max(e1 - s1, e2 - s2)
            if overlap < 0.9:
                notes.append(f"{a}+{b}: the two windows overlapped only {overlap:.0%}")
        expected = table.get((FAMILY[a], FAMILY[b]), default)
        factors = [ratio(speed(r), speed(alone(50, m))) for m, r in ((a, ra), (b, rb))]
        if None not in factors:
            measured[a, b] = factors
        for k, (m, r) in enumerate(((a, ra), (b, rb))):
            factor = factors[k]
            print(f"{(a + '+' + b) if k == 0 else '':<30}{m:<16}{fmt(speed(r), '.1f'):>10}"
                  f"{fmt(speed(alone(50, m)), '.1f'):>10}{fmt(factor, '.3f'):>8}"
                  f"{expected:>7.3f}{fmt(t if k == 0 else None, '.3f'):>7}"
                  f"{fmt(overlap if k == 0 else None, '.2f'):>9}")

# The factors as airtime reads them (--interference FILE): each side of each measured pair,
# kept within [0.001, 1] (the model has no speed-up from a neighbour, and the file no zero
# factor); a same-model pair as one row, the mean of its two sides. Pairs not measured are
# left out (they get the default, 1).
def clamp(factor):
    return min(1.0, max(0.001, factor))


rows = {}
for (a, b), (fa, fb) in measured.items():
    if a == b:
        rows[a, a] = clamp((fa + fb) / 2)
    else:
        rows[a, b], rows[b, a] = clamp(fa), clamp(fb)
with open(csv_path, "w") as f:
    f.write("family,other,factor\n")
    for (a, b), v in rows.items():
        f.write(f"{FAMILY[a]},{FAMILY[b]},{v:.3f}\n")
print(f"\n{len(rows)} factors written to {csv_path} (airtime sim --interference FILE)")

print("\nNotes:" if notes else "\nNotes: none (every run measured, on time)")
for n in notes:
    print("  " + n)
EOF
say "done: $report"
