#!/usr/bin/env bash
# Rewrites the generated blocks of docs/ from what the airtime binary prints, so that the
# docs cannot drift from the code.
#
# A generated block sits between two marker lines:
#   <!-- BEGIN generated: COMMAND (scripts/gen-docs.sh rewrites this block) -->
#   <!-- END generated: COMMAND -->
# and holds exactly what `airtime COMMAND` prints. The blocks:
#   docs/policies.md   policies --markdown   every registered policy: name, parameters,
#                                            one-line description, and sim's default list
#
# Usage: scripts/gen-docs.sh [--check] [--airtime PATH]
#   --check          change nothing: print a diff of every block that differs from the
#                    binary's output and exit 1 if there is one (a ctest runs this)
#   --airtime PATH   the airtime binary (default: build/src/airtime/cli/airtime; build it
#                    first with scripts/build.sh RelWithDebInfo airtime)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
check=0
airtime="$root/build/src/airtime/cli/airtime"
while (($# > 0)); do
  case "$1" in
    --check) check=1 ;;
    --airtime)
      airtime="${2:?gen-docs.sh: --airtime needs a path}"
      shift
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "gen-docs.sh: unknown argument '$1' (see --help)" >&2
      exit 2
      ;;
  esac
  shift
done
if [[ ! -x "$airtime" ]]; then
  echo "gen-docs.sh: $airtime is not an executable (build it: scripts/build.sh" \
    "RelWithDebInfo airtime; or pass --airtime PATH)" >&2
  exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
stale=0

# block FILE COMMAND...: the block of FILE marked with COMMAND gets `airtime COMMAND...`'s
# output (or, with --check, is compared with it).
block() {
  local file="$root/$1"
  shift
  local cmd="$*"
  local begin="<!-- BEGIN generated: $cmd (scripts/gen-docs.sh rewrites this block) -->"
  local end="<!-- END generated: $cmd -->"
  if [[ "$(grep -cxF -- "$begin" "$file")" != 1 || "$(grep -cxF -- "$end" "$file")" != 1 ]]; then
    echo "gen-docs.sh: ${file#"$root"/} must hold the line '$begin' once and the line" \
      "'$end' once after it" >&2
    exit 2
  fi
  "$airtime" "$@" >"$tmp/block"
  # The file with the block's old content replaced by the new one.
  awk -v begin="$begin" -v end="$end" -v block="$tmp/block" '
    $0 == begin { print; while ((getline line < block) > 0) print line; skip = 1; next }
    $0 == end { skip = 0 }
    !skip { print }' "$file" >"$tmp/new"
  if cmp -s "$file" "$tmp/new"; then
    return
  fi
  if ((check)); then
    echo "gen-docs.sh: ${file#"$root"/}: the block of \`airtime $cmd\` differs from what" \
      "the binary prints (run scripts/gen-docs.sh to rewrite it):" >&2
    diff -u --label "${file#"$root"/}" --label "airtime $cmd" "$file" "$tmp/new" >&2 || true
    stale=1
  else
    cp "$tmp/new" "$file"
    echo "gen-docs.sh: rewrote the block of \`airtime $cmd\` in ${file#"$root"/}"
  fi
}

block docs/policies.md policies --markdown

exit "$stale"
