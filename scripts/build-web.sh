#!/usr/bin/env bash
# Builds the dashboard (web/: TypeScript with Vite) into OUTDIR, for the C++ build to embed
# (web/CMakeLists.txt runs this; cmake/embed_web.cmake embeds the result).
#
# Runs `npm ci` in web/ when web/node_modules is missing or older than web/package-lock.json
# (the packages come from the npm registry then, once), type-checks the sources with tsc,
# then `vite build --outDir OUTDIR`, and touches OUTDIR/.built.
#
# Usage: scripts/build-web.sh OUTDIR
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if (($# != 1)) || [[ "$1" == -h || "$1" == --help ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  (($# == 1)) && exit 0
  exit 2
fi
out="$1"
web="$root/web"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build-web: $tool not found: install Debian's nodejs and npm (scripts/install-deps.sh)" >&2
    exit 1
  fi
done

cd "$web"
stamp=node_modules/.package-lock.json
if [[ ! -f "$stamp" || package-lock.json -nt "$stamp" || package.json -nt "$stamp" ]]; then
  echo "build-web: npm ci in web/ (packages from the npm registry)"
  npm ci --no-audit --no-fund --loglevel=error
fi
node_modules/.bin/tsc --noEmit -p .
node_modules/.bin/vite build --logLevel warn --outDir "$out" --emptyOutDir
touch "$out/.built"
