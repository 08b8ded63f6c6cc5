#!/usr/bin/env bash
# The one test command: what CI runs (.ci/run) and what a developer runs before pushing.
#
# Steps, in order, each timed:
#   1. scripts/install-deps.sh         (installs only what is missing)
#   2. scripts/check-format.sh         (clang-format over every tracked *.h / *.cc)
#   3. scripts/build.sh                (RelWithDebInfo into build/), then ctest there
#   4. scripts/build.sh asan           (ASan + UBSan into build-asan/), then ctest there
#   5. scripts/build.sh tsan           (ThreadSanitizer into build-tsan/), then ctest there:
#                                       the tests whose code runs threads (the daemon, the
#                                       HTTP API, the Slurm actuator, the simulator's
#                                       side-by-side replays); TSan cannot fail the others
#   6. scripts/build.sh fuzz           (the libFuzzer harnesses, clang, into build-fuzz/), then
#      scripts/fuzz.sh                  every harness for a short fixed time (fuzz/README.md)
# Each build after the first runs in the background, at nice 19, while the tests of the build
# before it run (see start_background_build). A failing step does not stop the later ones (a
# format error still lets the tests run), but a build that fails skips its tests. Prints
# ctest's summary for each build and a table of the steps; exits 1 when any step failed.
#
# Environment:
#   AIRTIME_JOBS         parallel compile and test jobs (default: nproc)
#   AIRTIME_TEST_ASAN=0  skip the ASan+UBSan build (quicker local runs; CI runs it)
#   AIRTIME_TEST_TSAN=0  skip the ThreadSanitizer build (likewise)
#   AIRTIME_TEST_FUZZ=0  skip the fuzz build and run (likewise)
#   AIRTIME_FUZZ_SECONDS seconds each harness runs in step 6 (default 10)
#   AIRTIME_BUILD_DIR, AIRTIME_ASAN_BUILD_DIR, AIRTIME_TSAN_BUILD_DIR, AIRTIME_FUZZ_BUILD_DIR
#                        build folders (default build/, build-asan/, build-tsan/, build-fuzz/)
#   CTEST_ARGS           extra ctest arguments, e.g. "-R Ledger"
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 2
jobs="${AIRTIME_JOBS:-$(nproc)}"
build_dir="${AIRTIME_BUILD_DIR:-$root/build}"
asan_dir="${AIRTIME_ASAN_BUILD_DIR:-$root/build-asan}"
tsan_dir="${AIRTIME_TSAN_BUILD_DIR:-$root/build-tsan}"
fuzz_dir="${AIRTIME_FUZZ_BUILD_DIR:-$root/build-fuzz}"
export AIRTIME_JOBS="$jobs"
# Sanitizers: leaks count as errors; UBSan stops at its first report, with a stack trace.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# TSan: a report fails the test (exit code 66); scripts/tsan.supp names the false positives
# of uninstrumented system libraries, each with why.
export TSAN_OPTIONS="${TSAN_OPTIONS:-suppressions=$root/scripts/tsan.supp:second_deadlock_stack=1}"

summary=()
failed=0
start_all=$SECONDS

# step NAME COMMAND...: runs a step, records its outcome and time; returns its status.
step() {
  local name="$1"
  shift
  local t0=$SECONDS rc=0
  echo
  echo "==== $name: $*"
  "$@" || rc=$?
  record "$name" $((SECONDS - t0)) "$rc"
  return "$rc"
}

# record NAME SECONDS STATUS: adds a step's line to the summary.
record() {
  if (($3 == 0)); then
    summary+=("$(printf '  %-22s ok      %4d s' "$1" "$2")")
  else
    summary+=("$(printf '  %-22s FAILED  %4d s  (exit %d)' "$1" "$2" "$3")")
    failed=1
  fi
}

skip() {
  summary+=("$(printf '  %-22s skipped         (%s)' "$1" "$2")")
}

# run_ctest DIR: runs every test of a build, in two parts: the Slurm lab's end-to-end tests
# (label slurm_lab) mostly wait on Slurm, each with a lab of its own, so they run after the
# others, twice as many at a time (ctest -R Slurm -j4: 37 s for 132 s of tests). Prints each
# part's summary, and both together at the end.
run_ctest() {
  local dir="$1" log rc=0 part ran=0 ran_failed=0 n f
  log="$(mktemp)"
  for part in "-LE slurm_lab --parallel $jobs" "-L slurm_lab --parallel $((jobs * 2))"; do
    # shellcheck disable=SC2086  # $part and CTEST_ARGS are lists of arguments
    ctest --test-dir "$dir" --output-on-failure --timeout 600 --no-tests=ignore $part \
      ${CTEST_ARGS:-} 2>&1 | tee "$log"
    ((PIPESTATUS[0] == 0)) || rc=1
    n=0 f=0
    read -r n f < <(sed -nE 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2 \1/p' "$log" |
      tail -n 1) || true
    ran=$((ran + ${n:-0}))
    ran_failed=$((ran_failed + ${f:-0}))
  done
  if ((ran == 0)); then
    echo "test.sh: no tests ran in $dir"
    rc=1
  fi
  ctest_summaries+=("$(basename "$dir"): $((ran - ran_failed)) of $ran tests passed, $ran_failed failed")
  rm -f "$log"
  return "$rc"
}
ctest_summaries=()

step "install deps" scripts/install-deps.sh || true
step "format check" scripts/check-format.sh || true

# The builds, in order, as four lists: the build step's name, scripts/build.sh's kind, the
# folder, and the function that runs that build's tests. A build whose AIRTIME_TEST_<KIND>=0
# is left out.
run_fuzz() {
  AIRTIME_BUILD_DIR="$fuzz_dir" AIRTIME_FUZZ_BUILD=0 scripts/fuzz.sh "${AIRTIME_FUZZ_SECONDS:-10}"
}
names=(build) kinds=(RelWithDebInfo) dirs=("$build_dir") runners=(run_ctest)
left_out=()
for kind in asan tsan fuzz; do
  skip_var="AIRTIME_TEST_${kind^^}"
  if [[ "${!skip_var:-1}" == 0 ]]; then
    left_out+=("$kind")
    continue
  fi
  names+=("$kind build") kinds+=("$kind") runners+=(run_ctest)
  case "$kind" in
    asan) dirs+=("$asan_dir") ;;
    tsan) dirs+=("$tsan_dir") ;;
    fuzz) dirs+=("$fuzz_dir") runners[-1]=run_fuzz ;;
  esac
done

# Each build after the first starts in the background, at the lowest CPU priority (nice 19),
# while the tests of the build before it run. Those tests spend much of their time waiting on
# the processes, sockets and Slurm daemons they start, and the build takes the cores they leave
# idle; when both want a core, Linux gives the tests 1024 shares to the build's 15. A build's
# output is printed when it ends, and its time in the summary runs from its start.
bg_pid="" bg_log="" bg_t0=0
start_background_build() {
  local name="$1" kind="$2" dir="$3"
  bg_log="$(mktemp)" bg_t0=$SECONDS
  echo
  echo "==== $name: starts in the background (nice 19): scripts/build.sh $kind"
  # Its own session, so that an interrupted test.sh stops the whole build (trap below).
  AIRTIME_BUILD_DIR="$dir" setsid nice -n 19 scripts/build.sh "$kind" >"$bg_log" 2>&1 &
  bg_pid=$!
}
trap '[[ -n "$bg_pid" ]] && kill -- -"$bg_pid" 2>/dev/null' EXIT
finish_background_build() {
  local name="$1" rc=0
  wait "$bg_pid" || rc=$?
  echo
  echo "==== $name: the background build's output"
  cat "$bg_log"
  rm -f "$bg_log"
  bg_pid=""
  record "$name" $((SECONDS - bg_t0)) "$rc"
  return "$rc"
}

# "asan build" -> "asan tests", "fuzz build" -> "fuzz run", "build" -> "tests".
tests_name_of() {
  case "$1" in
    build) echo tests ;;
    "fuzz build") echo "fuzz run" ;;
    *) echo "${1% build} tests" ;;
  esac
}
for ((i = 0; i < ${#names[@]}; i++)); do
  if ((i == 0)); then
    step "${names[i]}" env AIRTIME_BUILD_DIR="${dirs[i]}" scripts/build.sh "${kinds[i]}"
    built=$?
  else
    finish_background_build "${names[i]}"
    built=$?
  fi
  if ((i + 1 < ${#names[@]})); then
    start_background_build "${names[i + 1]}" "${kinds[i + 1]}" "${dirs[i + 1]}"
  fi
  if ((built == 0)); then
    step "$(tests_name_of "${names[i]}")" "${runners[i]}" "${dirs[i]}" || true
  else
    skip "$(tests_name_of "${names[i]}")" "the build failed"
  fi
done
for kind in "${left_out[@]}"; do
  skip "$kind build" "AIRTIME_TEST_${kind^^}=0"
  skip "$kind $([[ $kind == fuzz ]] && echo run || echo tests)" "AIRTIME_TEST_${kind^^}=0"
done

echo
echo "==== summary ($((SECONDS - start_all)) s in all, $jobs jobs)"
printf '%s\n' "${summary[@]}"
if ((${#ctest_summaries[@]} > 0)); then
  echo "ctest:"
  printf '  %s\n' "${ctest_summaries[@]}"
fi
if ((failed)); then
  echo "test.sh: FAILED"
  exit 1
fi
echo "test.sh: all steps passed"
