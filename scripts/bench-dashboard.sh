#!/usr/bin/env bash
# The dashboard's time to interactive at scale: starts `airtime server` on 1,000 fake H100s
# in a temporary data directory, submits 10,000 workloads (1-2 GPUs each, no command: they
# run virtually, 750 at a time, the rest wait), then opens the page in Debian's chromium
# under playwright-core (web/bench/tti.bench.mjs) several times and prints, per run, the
# milliseconds from the navigation's start to the first refresh having rendered every view,
# with its steps, and the median. Stops the server and removes its data at the end.
# A benchmark, not a test: the figure depends on the machine and its load.
#
# Usage: scripts/bench-dashboard.sh [--gpus N] [--workloads N] [--runs N]
# Environment: AIRTIME_BIN, the airtime binary (default build/src/airtime/cli/airtime, which
#   must embed the dashboard: scripts/build.sh with npm installed); AIRTIME_CHROMIUM, the
#   browser (default /usr/bin/chromium).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gpus=1000
workloads=10000
runs=5
while (($# > 0)); do
  case "$1" in
    --gpus) gpus="$2"; shift 2 ;;
    --workloads) workloads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "bench-dashboard: unknown argument '$1' (see --help)" >&2
      exit 2
      ;;
  esac
done

bin="${AIRTIME_BIN:-$root/build/src/airtime/cli/airtime}"
if [[ ! -x "$bin" ]]; then
  echo "bench-dashboard: no airtime binary at $bin: build it first (scripts/build.sh)" >&2
  exit 1
fi
if [[ ! -d "$root/web/node_modules/playwright-core" ]]; then
  echo "bench-dashboard: web/node_modules is missing: run 'npm ci' in web/ (the build does)" >&2
  exit 1
fi

data="$(mktemp -d /tmp/airtime-bench-dashboard.XXXXXX)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$data"
}
trap cleanup EXIT

"$bin" server --data "$data/data" --listen 127.0.0.1:0 --fake-gpus "${gpus}xH100" \
  --isolation off >"$data/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do
  [[ -s "$data/data/address" ]] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "bench-dashboard: the server exited:" >&2
    cat "$data/server.log" >&2
    exit 1
  fi
  sleep 0.1
done
if [[ ! -s "$data/data/address" ]]; then
  echo "bench-dashboard: the server did not start within 20 s; its log:" >&2
  cat "$data/server.log" >&2
  exit 1
fi
addr="$(cat "$data/data/address")"
token="$(awk '$1 == "admin" { print $2; exit }' "$data/data/tokens")"
if curl -s "http://$addr/" | grep -q "was not built"; then
  echo "bench-dashboard: $bin was built without the dashboard (install nodejs and npm, rebuild)" >&2
  exit 1
fi

cd "$root/web"
node bench/tti.bench.mjs --addr "$addr" --token "$token" --fill "$workloads" --runs "$runs"
