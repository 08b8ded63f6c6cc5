#!/usr/bin/env bash
# Checks that every tracked C++ file (*.h, *.cc) is formatted as .clang-format says.
#
# Runs `clang-format --dry-run -Werror` over each file, lists the files that differ and
# exits 1 when there is one. Changes nothing. To fix a file: clang-format -i FILE.
#
# Usage: scripts/check-format.sh            (all tracked *.h and *.cc files)
#        scripts/check-format.sh FILE...    (just these)
# Environment: CLANG_FORMAT, the clang-format binary (default: clang-format).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
clang_format="${CLANG_FORMAT:-clang-format}"
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "check-format: $clang_format not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi

files=()
if (($# > 0)); then
  files=("$@")
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  while IFS= read -r -d '' f; do
    [[ -f "$f" ]] && files+=("$f")  # skip tracked files deleted in the work tree
  done < <(git ls-files -z -- '*.h' '*.cc')
else
  while IFS= read -r -d '' f; do
    files+=("${f#./}")
  done < <(find . \( -path './build*' -o -path ./.git \) -prune -o \
    -type f \( -name '*.h' -o -name '*.cc' \) -print0 | sort -z)
fi

bad=()
for f in "${files[@]}"; do
  if ! "$clang_format" --dry-run -Werror "$f" >/dev/null 2>&1; then
    bad+=("$f")
  fi
done

if ((${#bad[@]} > 0)); then
  echo "check-format: ${#bad[@]} of ${#files[@]} files are not formatted ($("$clang_format" --version)):"
  printf '  %s\n' "${bad[@]}"
  echo "check-format: to fix them: clang-format -i FILE... (all: git ls-files -z '*.h' '*.cc' | xargs -0 clang-format -i)"
  exit 1
fi
echo "check-format: all ${#files[@]} files are formatted"
