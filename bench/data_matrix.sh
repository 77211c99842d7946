#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The data-integrity fault matrix, both sides, one boot per side: every
# fault of tests/testbed/cases/data_fault.sh against `pathwise datapath`
# (--multipath off) and against the kernel's multipath head (--multipath
# on, round-robin) as the control, with the acknowledged-write ledger and
# fio's verify as witnesses; plus the seeded defects and a target that
# loses writes, which the ledger must catch, and the old volatile target,
# which the stored-data check must refuse. The test command runs the
# datapath's matrix and a part of the kernel's (tests/testbed/CMakeLists.txt);
# this runs all of it and writes the table.
#
#   bench/data_matrix.sh [--sides "datapath kernel volatile"] [--out FILE]
#       [--pathwise BIN] [--ledger BIN] [--rows-only]
#
# Writes FILE (default bench/results/data_matrix.txt): one row per case
# (fault, side, what was expected, what the ledger and fio found). Exits 1
# when a case failed its expectation. VM time: about 12 minutes.
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
sides="datapath kernel volatile"
out=$root/bench/results/data_matrix.txt
bin=$root/build/pathwise
ledger=$root/build/tests/data_ledger/pathwise-ledger
rows_only=0
while (($#)); do
  case $1 in
    --sides) sides=$2 ;;
    --out) out=$2 ;;
    --pathwise) bin=$(readlink -f "$2") ;;
    --ledger) ledger=$(readlink -f "$2") ;;
    --rows-only) rows_only=1; shift; continue ;;
    *) echo "data_matrix: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift 2
done
C=$root/tests/testbed/cases/data_fault.sh
# FAULT EXPECT ERRORS [DATAPATH_ARGS]
datapath_cases=(
  "none intact none" "link_flap intact none" "all_down_short intact none"
  "all_down_long intact some" "ana intact none" "reset intact none"
  "reconnect intact any" "ghost_reset intact any" "ghost_stall intact any"
  "ghost_reset report any --write-fence 0s" "dm_error_writes intact some"
  "dm_drop_writes violations any" "dm_delay intact none" "cpu_starve intact any"
  "mem_pressure intact any" "sigkill intact any" "sigkill_recover intact none --user-recovery"
  "link_flap violations any --seed-defect ack_before_completion"
  "ghost_stall violations any --seed-defect retry_timed_out_at_once --policy round-robin")
kernel_cases=(
  "none intact none" "link_flap intact none" "all_down_short intact none"
  "all_down_long intact any" "ana intact none" "reset intact none"
  "reconnect intact any" "ghost_reset report any" "ghost_stall report any"
  "dm_error_writes intact some" "dm_drop_writes violations any" "dm_delay intact none")
volatile_cases=("none refused any")

# The cases' output (ledger reports, logs) stays in $work for a look;
# --rows-only makes the table again from it without running anything.
work=${DATA_MATRIX_WORK:-/tmp/data_matrix}
((rows_only)) || rm -rf "$work"
mkdir -p "$work"
rm -f "$work/rows"
echo "data_matrix: case output in $work"
rc=0
for side in $sides; do
  case $side in
    datapath) args=(--multipath off); cases=("${datapath_cases[@]}") ;;
    kernel) args=(--multipath on); cases=("${kernel_cases[@]}") ;;
    volatile) args=(--multipath on --target volatile); cases=("${volatile_cases[@]}") ;;
    *) echo "data_matrix: unknown side '$side'" >&2; exit 2 ;;
  esac
  run=()
  for c in "${cases[@]}"; do
    read -r f e r extra <<<"$c"
    # shellcheck disable=SC2206
    ((${#run[@]})) && run+=(--and)
    run+=("$C" "$f" "$e" "$r" "$bin" "$ledger" $extra)
  done
  echo "data_matrix: $side: ${#cases[@]} cases"
  if ((!rows_only)); then
    "$root/tests/testbed/testbed" run --kernel 6.12 --topology tcp:2 "${args[@]}" \
      --timeout 3000 --quiet --out "$work/$side" "${run[@]}" >"$work/$side.log" 2>&1 || rc=1
  fi
  grep '^testbed:   ' "$work/$side.log" || true
  i=0
  for c in "${cases[@]}"; do
    name=data_fault
    ((i == 0)) || name=data_fault.$((i + 1))
    i=$((i + 1))
    st=$(grep -E "^testbed: +(ok|FAIL|STOPPED|not run) +$name( |:)" "$work/$side.log" | awk '{print $2}' || true)
    # A side of one case has its output at the top, and no case lines.
    res=$(cat "$work/$side/$name/result.txt" "$work/$side/result.txt" 2>/dev/null | head -1 || true)
    ((${#cases[@]} > 1)) || st=$(grep -q "^ok: " "$work/$side/testbed-console.log" && ! grep -q "^FAIL" "$work/$side/testbed-console.log" && echo ok || echo FAIL)
    res=${res:-RESULT (none)}
    extra=$(awk '{ $1 = $2 = $3 = ""; print }' <<<"$c" | sed 's/^ *//')
    printf '%-8s %-6s %-16s %-10s %s%s\n' "$side" "${st:-?}" "$(cut -d' ' -f1 <<<"$c")" \
      "$(cut -d' ' -f2 <<<"$c")" "${res#RESULT }" "${extra:+ datapath_args=\"$extra\"}" >>"$work/rows"
  done
done
{
  echo "# data-integrity fault matrix: the acknowledged-write ledger (tests/data_ledger) and fio's crc32c verify"
  echo "# date: $(date -u +%FT%TZ)  revision: $(git -C "$root" rev-parse --short HEAD)  host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# command: bench/data_matrix.sh --sides \"$sides\"; guest 6.12, NVMe/TCP x2, memory-backed null_blk (volatile: none)"
  echo "# columns: side, case status, fault, expectation, then the case's RESULT fields"
  echo
  cat "$work/rows"
} >"$out"
cat "$out"
exit "$rc"
