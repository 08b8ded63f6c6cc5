#!/usr/bin/env bash
# Builds the libFuzzer harnesses (scripts/build.sh fuzz, into build-fuzz/) and runs each for a
# fixed time. See fuzz/README.md.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_HARNESS] [HARNESS...]
#   SECONDS_PER_HARNESS  default 60
#   HARNESS...           names under fuzz/corpus/ (default: every harness)
# Each harness starts from its committed seed corpus, fuzz/corpus/NAME (read only), and a work
# corpus outside the tree, $AIRTIME_FUZZ_WORK/NAME/corpus, where new inputs are kept between
# runs. A crash, leak, timeout (-timeout=10 s) or out-of-memory (-rss_limit_mb=2048) input
# is saved to $AIRTIME_FUZZ_WORK/NAME/crashes/ and its path printed: copy it to
# fuzz/regressions/NAME/ once fixed, and every build's ctest fuzz_replay.NAME replays it.
# Prints per harness: seconds run, executions, crashes; exits 1 if any harness crashed.
#
# Environment:
#   AIRTIME_FUZZ_WORK     work folder (default ${TMPDIR:-/tmp}/airtime-fuzz)
#   AIRTIME_FUZZ_MAX_LEN  the longest input tried (default 16384 bytes)
#   AIRTIME_FUZZ_BUILD=0  use build-fuzz/ as it is (do not build first)
#   AIRTIME_FUZZ_JOBS     harnesses run at once (default: AIRTIME_JOBS, else nproc); each
#                         is one process, so N at once take N cores
#   AIRTIME_BUILD_DIR, AIRTIME_JOBS, AIRTIME_CMAKE_ARGS  as for scripts/build.sh
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "fuzz.sh: SECONDS_PER_HARNESS must be a positive integer, got '$seconds'" >&2
  exit 2
fi
shift $(($# > 0 ? 1 : 0))
harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
  for d in "$root"/fuzz/corpus/*/; do harnesses+=("$(basename "$d")"); done
fi
build="${AIRTIME_BUILD_DIR:-$root/build-fuzz}"
work="${AIRTIME_FUZZ_WORK:-${TMPDIR:-/tmp}/airtime-fuzz}"
max_len="${AIRTIME_FUZZ_MAX_LEN:-16384}"
jobs="${AIRTIME_FUZZ_JOBS:-${AIRTIME_JOBS:-$(nproc)}}"
if ! [[ "$jobs" =~ ^[0-9]+$ ]] || ((jobs < 1)); then
  echo "fuzz.sh: AIRTIME_FUZZ_JOBS must be a positive integer, got '$jobs'" >&2
  exit 2
fi
# UBSan reports with a stack trace, so that a crash names the line.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

if [[ "${AIRTIME_FUZZ_BUILD:-1}" != 0 ]]; then
  targets=()
  for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
  AIRTIME_BUILD_DIR="$build" "$root/scripts/build.sh" fuzz "${targets[@]}" || exit 2
fi

# run_one H: runs harness H for `seconds`; writes its summary row to $work/H/row and, when it
# crashed, the reason to $work/H/crash. Harnesses run `jobs` at a time (each is one process).
run_one() {
  local h="$1" bin="$build/fuzz/fuzz_$1"
  mkdir -p "$work/$h/corpus" "$work/$h/crashes"
  rm -f "$work/$h/row" "$work/$h/crash"
  local log="$work/$h/last.log" before t0 rc dt execs found artifact
  before=$(find "$work/$h/crashes" -type f | wc -l)
  t0=$SECONDS
  # The work corpus comes first: libFuzzer writes new inputs there, never into the tree.
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len="$max_len" \
    -print_final_stats=1 -artifact_prefix="$work/$h/crashes/" \
    "$work/$h/corpus" "$root/fuzz/corpus/$h" >"$log" 2>&1
  rc=$?
  dt=$((SECONDS - t0))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  found=$(($(find "$work/$h/crashes" -type f | wc -l) - before))
  if ((rc != 0)); then
    ((found > 0)) || found=1
    artifact=$(grep -o "Test unit written to .*" "$log" | tail -1 | sed 's/Test unit written to //')
    {
      grep -E "ERROR: |SUMMARY: |runtime error" "$log" | head -5
      echo "fuzz.sh: $h failed (exit $rc); input: ${artifact:-see $log}"
    } >"$work/$h/crash"
  fi
  printf '  %-16s %5d s  %10s execs  %d crashes\n' "$h" "$dt" "${execs:-?}" "$found" \
    >"$work/$h/row"
}

for h in "${harnesses[@]}"; do
  if [[ ! -x "$build/fuzz/fuzz_$h" ]]; then
    echo "fuzz.sh: no harness '$h' ($build/fuzz/fuzz_$h not built)" >&2
    exit 2
  fi
done
running=0
for h in "${harnesses[@]}"; do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  echo "==== fuzz $h for ${seconds}s"
  run_one "$h" &
  running=$((running + 1))
done
wait

rows=()
crashed=0
for h in "${harnesses[@]}"; do
  rows+=("$(cat "$work/$h/row" 2>/dev/null || printf '  %-16s (no result)' "$h")")
  if [[ -s "$work/$h/crash" ]]; then
    crashed=1
    cat "$work/$h/crash"
  fi
done

echo
echo "==== fuzz summary (${seconds}s per harness; work corpus in $work)"
printf '%s\n' "${rows[@]}"
if ((crashed)); then
  echo "fuzz.sh: CRASHED (inputs under $work/*/crashes/)"
  exit 1
fi
echo "fuzz.sh: no crashes"
