#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The lab's own run time: the 480 s loss-schedule scenario under every policy.
# Writes bench/results/lab.txt (the table, wall and CPU seconds).
#
# Usage: bench/lab_runtime.sh [BINARY]
#   BINARY: build/pathwise (runs `pathwise lab`, the default) or
#           build/lab/pathwise_lab_tool (the same flags, no agent).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${PATHWISE_BUILD_DIR:-build}/pathwise}
args=()
[[ $(basename "$bin") == pathwise ]] && args=(lab)
scenario=lab/scenarios/loss-schedule.scn
out=bench/results/lab.txt
mkdir -p bench/results
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.time"' EXIT
/usr/bin/time -f '%e %U %S' -o "$tmp.time" \
  "$bin" "${args[@]}" --scenario "$scenario" > "$tmp"
read -r wall user sys < "$tmp.time"
{
  echo "# bench/lab_runtime.sh: pathwise lab, $scenario, all policies"
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "wall_seconds $wall"
  echo "cpu_seconds $(echo "$user + $sys" | bc)"
  echo
  cat "$tmp"
} > "$out"
cat "$out"
