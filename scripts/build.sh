#!/usr/bin/env bash
# Configures and builds airtime.
#
# Usage: scripts/build.sh [BUILD_TYPE | asan | tsan | fuzz] [TARGET...]
#   (none)          RelWithDebInfo into build/
#   Debug, Release, RelWithDebInfo, MinSizeRel
#                   that CMake build type into build/ (RelWithDebInfo: -O2 -g1, line
#                   tables only)
#   asan            AddressSanitizer + UndefinedBehaviorSanitizer (-DAIRTIME_SANITIZE=ON)
#                   into build-asan/: -Og -g1 with assertions on, no benchmarks; GCC's
#                   warnings that sanitizers make unreliable do not fail this build (the
#                   normal build still treats them as errors)
#   tsan            ThreadSanitizer (-DAIRTIME_TSAN=ON) into build-tsan/, the same way, with
#                   only the tests whose code runs threads (airtime_test's THREADS, the
#                   daemon's end-to-end tests): TSan cannot fail a test that runs one thread
#   fuzz            the libFuzzer harnesses of fuzz/ (-DAIRTIME_FUZZ=ON) into build-fuzz/ with
#                   clang++ 14, ASan and UBSan; no tests, benchmarks or CLI: the default
#                   target is `fuzzers` (scripts/fuzz.sh runs them)
#   TARGET...       build only these targets (default: all)
# Environment:
#   AIRTIME_JOBS       parallel compile jobs (default: nproc)
#   AIRTIME_BUILD_DIR  build folder instead of build/ or build-asan/
#   AIRTIME_CMAKE_ARGS extra arguments for the CMake configure step
# The binary ends up at <build folder>/src/airtime/cli/airtime.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kind="${1:-RelWithDebInfo}"
targets=("${@:2}")
jobs="${AIRTIME_JOBS:-$(nproc)}"

args=()
case "$kind" in
  asan | ASAN | sanitize | tsan | TSAN)
    if [[ "${kind,,}" == tsan ]]; then
      dir="${AIRTIME_BUILD_DIR:-$root/build-tsan}"
      args+=(-DAIRTIME_TSAN=ON -DAIRTIME_SANITIZE=OFF)
    else
      dir="${AIRTIME_BUILD_DIR:-$root/build-asan}"
      args+=(-DAIRTIME_SANITIZE=ON -DAIRTIME_TSAN=OFF)
    fi
    # -g1 keeps the line tables that stack traces need. TSan: -O1, as its docs recommend
    # (it compiles about as fast as -O0 here). ASan+UBSan: -Og, because at -O1 GCC's UBSan
    # checks (alignment above all) make it the slowest build of all. Measured on
    # airtime_policy_test and sim_test with their libraries, 2 jobs: -O1 306 CPU s to build,
    # sim_test 11.0 s; -Og 190 CPU s, 16.4 s; -O0 189 CPU s, 54.7 s.
    if [[ "${kind,,}" == tsan ]]; then opt="-O1 -g1"; else opt="-Og -g1"; fi
    args+=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=$opt" -DAIRTIME_BUILD_BENCH=OFF)
    # GCC's manual: "sanitizers tend to increase the rate of false positive warnings, most
    # notably those around -Wmaybe-uninitialized. We recommend against combining -Werror
    # and sanitizers." (GCC 12 reports one inside <regex> here.)
    flags="-Wno-maybe-uninitialized -Wno-error=array-bounds -Wno-error=stringop-overflow"
    flags+=" -Wno-error=stringop-overread -Wno-error=restrict"
    args+=("-DCMAKE_CXX_FLAGS=$flags")
    ;;
  fuzz | FUZZ)
    dir="${AIRTIME_BUILD_DIR:-$root/build-fuzz}"
    args+=(-DAIRTIME_FUZZ=ON -DAIRTIME_SANITIZE=OFF -DAIRTIME_TSAN=OFF -DAIRTIME_BUILD_TESTS=OFF
      -DAIRTIME_BUILD_BENCH=OFF -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug
      "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1")
    ((${#targets[@]} > 0)) || targets=(fuzzers)
    ;;
  Debug | Release | RelWithDebInfo | MinSizeRel)
    dir="${AIRTIME_BUILD_DIR:-$root/build}"
    args+=(-DCMAKE_BUILD_TYPE="$kind" -DAIRTIME_SANITIZE=OFF -DAIRTIME_TSAN=OFF)
    # RelWithDebInfo with line tables only (-g1): stack traces and profilers need no more,
    # and CMake's -g costs a quarter of the compile time (daemon.cc: 11.4 s at -O2 -g,
    # 9.1 s at -O2 -g1). A debugger's view of locals wants a Debug build.
    if [[ "$kind" == RelWithDebInfo ]]; then
      args+=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
    fi
    ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "build.sh: unknown build type '$kind' (expected Debug, Release, RelWithDebInfo," \
      "MinSizeRel, asan, tsan or fuzz)" >&2
    exit 2
    ;;
esac

# Ninja for a fresh folder when it is installed; a configured folder keeps its generator.
if [[ ! -f "$dir/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
  args+=(-G Ninja)
fi
# shellcheck disable=SC2206  # word splitting of the extra arguments is intended
args+=(${AIRTIME_CMAKE_ARGS:-})

echo "build.sh: $kind build in ${dir#"$root"/} with $jobs jobs"
cmake -S "$root" -B "$dir" "${args[@]}"
if ((${#targets[@]} > 0)); then
  cmake --build "$dir" --parallel "$jobs" --target "${targets[@]}"
else
  cmake --build "$dir" --parallel "$jobs"
fi
