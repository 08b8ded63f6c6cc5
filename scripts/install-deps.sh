#!/usr/bin/env bash
# Installs the Debian 12 packages that airtime's build, tests and format check need.
#
# Fast when everything is there: each package is checked with dpkg first, and apt-get runs
# (update, then a non-interactive install of the missing packages only) just when one is
# missing. Runs as root, or through sudo otherwise.
#
# Usage: scripts/install-deps.sh
set -euo pipefail

PACKAGES=(
  build-essential    # GCC 12, make, libc headers
  cmake              # 3.25 on Debian 12
  ninja-build        # the generator scripts/build.sh prefers
  git                # the format check lists tracked files
  python3
  clang-format       # scripts/check-format.sh (clang-format 14 on Debian 12)
  clang              # the fuzz build (scripts/build.sh fuzz): clang++ 14
  libclang-rt-14-dev # libFuzzer and the sanitizer runtimes for clang 14
  lld                # links about 4x faster than GNU ld (CMakeLists.txt uses it when present)
  nlohmann-json3-dev # JSON reports
  libyaml-cpp-dev    # cluster and workload files
  libyaml-dev        # libyaml: checks YAML text and its budgets before yaml-cpp (yaml_budget.h)
  pkg-config         # finds libyaml and libbpf for CMake
  libbpf-dev         # loads cgroup v2 device programs (src/airtime/exec/device_program.h)
  libcli11-dev       # the airtime command line
  libspdlog-dev
  libgtest-dev       # unit and end-to-end tests
  libgmock-dev
  libbenchmark-dev   # bench/
  libsqlite3-dev     # the daemon's embedded store
  libcpp-httplib-dev # the daemon's HTTP API and the CLI's client
  coinor-libclp-dev  # COIN-OR CLP: solves the LP bound on a replay's return (src/airtime/sim/lp_bound.h)
  coinor-libcbc-dev  # COIN-OR CBC: solves the MILP optimum of model variants (src/airtime/sim/variant_milp.h)
  prometheus         # promtool and a real Prometheus for the /metrics tests (tests/e2e/prometheus_e2e_test.cc)
  chromium           # the dashboard's browser test (tests/e2e/dashboard_e2e_test.cc, playwright-core)
)
# Node.js and npm build the dashboard (web/: npm ci, vite build; scripts/build-web.sh): Debian's
# nodejs and npm, unless a node of its own with npm is installed already (NodeSource's nodejs
# package, for instance, holds npm and conflicts with Debian's npm package: installing that
# would replace it). Debian 12's Node.js 18 builds the page and runs the browser test
# (web/package.json pins playwright-core 1.61.1, the last release that supports Node.js 18).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run this script as root, or install sudo" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
apt_opts=(-q -o Acquire::Retries=3 -o DPkg::Lock::Timeout=300)
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y \
  --no-install-recommends "${missing[@]}"
