#!/usr/bin/env bash
# Bundles the airtime binary with the shared libraries it needs beyond glibc into
# out/device/{bin,lib}, for a machine that has a GPU but not this project's Debian packages
# (the device machine of scripts/device/h200-check.sh; carry out/device there).
#
# Usage: scripts/device/bundle.sh     (builds Release into build-release/ first)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
AIRTIME_BUILD_DIR="$root/build-release" scripts/build.sh Release >/dev/null
rm -rf out/device
mkdir -p out/device/bin out/device/lib
cp build-release/src/airtime/cli/airtime out/device/bin/
strip out/device/bin/airtime
# Every resolved library except the C runtime, which the device machine has.
ldd out/device/bin/airtime | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) ;;
    *) cp -L "$lib" out/device/lib/ ;;
  esac
done
du -sh out/device
echo "bundle: out/device (run with LD_LIBRARY_PATH=out/device/lib)"
