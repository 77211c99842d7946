#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes a copy of a Prometheus rules file with some fleet thresholds changed.
# The thresholds of the fleet alerts are recording rules of one number each
# (`record: fleet:...` with `expr: vector(N)`, group pathwise.fleet); this
# rewrites the `expr:` of the named ones and nothing else. The shipped rules
# file is never edited; the copy goes wherever the caller says.
#   deploy/prometheus/override-threshold.sh NAME=VALUE... [SRC] > OUT
#   NAME: a threshold record, with or without its `fleet:` prefix:
#     pathwise_target_port_degraded_hosts:min_ratio   (shipped 0.5)
#     pathwise_target_port_degraded_hosts:min_count   (shipped 2)
#     pathwise_host_degraded_paths:min_ratio          (shipped 0.5)
#     pathwise_host_degraded_target_ports:min_count   (shipped 2)
#   VALUE: a non-negative number (3, 0.25). SRC defaults to the shipped
#   deploy/prometheus/pathwise-rules.yml.
# A NAME that is not such a record of SRC, or a bad VALUE, is an error
# (exit 2). Combine with override-for.sh by passing one's output as the
# other's SRC.
set -euo pipefail
usage() {
  echo "usage: $0 NAME=VALUE... [RULES_FILE] > OUT   (e.g. pathwise_target_port_degraded_hosts:min_count=3)" >&2
  exit 2
}
sets=()
while (($#)) && [[ $1 == *=* ]]; do
  name=${1%%=*} value=${1#*=}
  [[ $name == fleet:* ]] || name=fleet:$name
  [[ $name =~ ^fleet:[a-z_]+:[a-z_]+$ && $value =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage
  sets+=("$name=$value")
  shift
done
((${#sets[@]} >= 1 && $# <= 1)) || usage
src=${1:-$(dirname "$(readlink -f "$0")")/pathwise-rules.yml}
[[ -r $src ]] || { echo "$0: cannot read $src" >&2; exit 2; }
for s in "${sets[@]}"; do
  name=${s%%=*}
  # The record line, then its expr: vector(N) on the next line.
  awk -v n="$name" '
    $0 ~ "^[[:space:]]*-[[:space:]]*record:[[:space:]]*" n "[[:space:]]*$" { want = 1; next }
    want { found = ($0 ~ /^[[:space:]]*expr:[[:space:]]*vector\([0-9.]+\)[[:space:]]*$/); exit }
    END { exit !found }' "$src" ||
    { echo "$0: no threshold record $name (record: with expr: vector(N)) in $src" >&2; exit 2; }
done
awk -v sets="${sets[*]}" '
  BEGIN { n = split(sets, a, " "); for (i = 1; i <= n; i++) { k = a[i]; sub(/=.*/, "", k); v = a[i]; sub(/^[^=]*=/, "", v); val[k] = v } }
  /^[[:space:]]*-[[:space:]]*(alert|record):/ {
    cur = $0; sub(/^[[:space:]]*-[[:space:]]*(alert|record):[[:space:]]*/, "", cur); sub(/[[:space:]]*$/, "", cur)
    print; next
  }
  (cur in val) && /^[[:space:]]*expr:[[:space:]]*vector\([0-9.]+\)[[:space:]]*$/ {
    match($0, /^[[:space:]]*/); print substr($0, 1, RLENGTH) "expr: vector(" val[cur] ")"; delete val[cur]; next
  }
  { print }' "$src"
