#!/usr/bin/env bash
# The main job: installs what is missing, builds airtime, and replays the shipped mixed day
# under several policies side by side (airtime sim's default set: every replay policy).
#
# Input: examples/mixed-day/cluster.yaml with every other *.yaml in examples/mixed-day/ as
# workload files; where that folder is absent, examples/clusters/mixed-64.yaml with
# examples/quickstart/workloads.yaml. The replay covers 24 hours; the table goes to the
# terminal, the full report to out/mixed-day.json (docs/report-format.md) and the charts to
# out/mixed-day.html (one self-contained file: open it in any browser, no network needed).
#
# Usage: scripts/demo.sh [EXTRA airtime sim OPTIONS...]     e.g. scripts/demo.sh --seed 7
# Environment:
#   AIRTIME_POLICIES  policies to compare, e.g. fifo,bestfit (default: airtime sim's own
#                     default, every shipped policy meant for replays)
#   AIRTIME_JOBS      parallel compile jobs (default: nproc)
#   AIRTIME_BUILD_DIR build folder (default: build/)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${AIRTIME_BUILD_DIR:-$root/build}"

scripts/install-deps.sh
AIRTIME_BUILD_DIR="$build_dir" scripts/build.sh RelWithDebInfo

day="examples/mixed-day"
workload_args=()
if [[ -f "$day/cluster.yaml" ]]; then
  cluster="$day/cluster.yaml"
  shopt -s nullglob
  for f in "$day"/*.yaml "$day"/*.yml; do
    [[ "$(basename "$f")" == cluster.yaml ]] && continue
    workload_args+=(--workload "$f")
  done
  shopt -u nullglob
  if ((${#workload_args[@]} == 0)); then
    echo "demo.sh: $day/ holds no workload *.yaml besides cluster.yaml" >&2
    exit 1
  fi
else
  echo "demo.sh: $day/ is not there; replaying the quickstart day instead"
  cluster="examples/clusters/mixed-64.yaml"
  workload_args=(--workload examples/quickstart/workloads.yaml)
fi

policy_args=()
if [[ -n "${AIRTIME_POLICIES:-}" ]]; then
  policy_args=(--policy "$AIRTIME_POLICIES")
fi

mkdir -p out
cmd=("$build_dir/src/airtime/cli/airtime" sim --cluster "$cluster" "${workload_args[@]}"
  "${policy_args[@]}" --horizon 24h --json out/mixed-day.json --html out/mixed-day.html "$@")
echo
echo "demo.sh: ${cmd[*]#"$root"/}"
echo
"${cmd[@]}"
echo
echo "demo.sh: the charts: $root/out/mixed-day.html (open it in a browser)"
