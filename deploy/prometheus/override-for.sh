#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes a copy of a Prometheus rules file with `for:` set to one duration.
# This is the only sanctioned way to shorten `for:` for a test (the
# end-to-end testbed case uses it); the shipped rules file is never edited
# for a test, and the copy goes wherever the caller says.
#   deploy/prometheus/override-for.sh [--alert NAME]... DURATION [SRC] > OUT
#   DURATION: a Prometheus duration (5s, 0s, 1m); SRC defaults to the shipped
#   deploy/prometheus/pathwise-rules.yml.
#   --alert NAME (repeatable): rewrite only the `for:` of these alerts; the
#   others keep their shipped `for:`. Without it, every `for:` is rewritten.
#   A NAME that is not an alert of SRC is an error.
# A test that shortens only the alerts it exercises keeps the others (e.g.
# the informational PathwiseLatencyImbalance, 5m, and PathwiseIopolicyMismatch,
# 30m) slower than them, as they are in production.
set -euo pipefail
usage() {
  echo "usage: $0 [--alert NAME]... DURATION [RULES_FILE] > OUT   (DURATION like 5s)" >&2
  exit 2
}
alerts=()
while (($#)) && [[ $1 == --alert ]]; do
  (($# >= 2)) && [[ $2 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || usage
  alerts+=("$2")
  shift 2
done
if (($# < 1 || $# > 2)) || ! [[ $1 =~ ^[0-9]+(ms|s|m|h)$ ]]; then usage; fi
src=${2:-$(dirname "$(readlink -f "$0")")/pathwise-rules.yml}
[[ -r $src ]] || { echo "$0: cannot read $src" >&2; exit 2; }
for a in "${alerts[@]}"; do
  grep -qE "^[[:space:]]*-[[:space:]]*alert:[[:space:]]*$a[[:space:]]*$" "$src" ||
    { echo "$0: no alert $a in $src" >&2; exit 2; }
done
# Every `for:` key of a selected alert (all when none is named), whatever its
# indentation; nothing else.
awk -v dur="$1" -v names="${alerts[*]}" '
  BEGIN { n = split(names, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
  /^[[:space:]]*-[[:space:]]*(alert|record):/ {
    cur = $0; sub(/^[[:space:]]*-[[:space:]]*(alert|record):[[:space:]]*/, "", cur); sub(/[[:space:]]*$/, "", cur)
  }
  /^[[:space:]]*for:[[:space:]]*[0-9a-z]+[[:space:]]*$/ && (n == 0 || (cur in want)) {
    match($0, /^[[:space:]]*/); print substr($0, 1, RLENGTH) "for: " dur; next
  }
  { print }' "$src"
