#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The chaos soak: `pathwise datapath` in the testbed (NVMe/TCP, two paths,
# 6.12 guest, native multipath off) under a random fault schedule drawn
# from a seed, with the acknowledged-write ledger (tests/data_ledger) writing
# and checking through it; at the end the ledger reads the whole region
# back. The guest side is tests/testbed/cases/chaos_soak.sh.
#
#   bench/chaos_soak.sh [--minutes N] [--seed S] [--pathwise BIN]
#       [--ledger BIN] [--out FILE] [--datapath-args "..."]
#
# Writes FILE (default bench/results/chaos_soak.txt): the command that
# replays the run, the faults injected (time, kind, path, duration), the
# ledger's counts (I/Os, acknowledged and failed writes, errors returned to
# the application), the datapath's summary (failovers, timeouts) and the
# acknowledged writes lost, which must be 0. Exits 1 when the ledger finds
# any violation or cannot verify. VM time: MINUTES + about 2 minutes.
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
minutes=10 seed=$((RANDOM * 32768 + RANDOM)) dp_args=""
bin=$root/build/pathwise
ledger=$root/build/tests/data_ledger/pathwise-ledger
out=$root/bench/results/chaos_soak.txt
while (($#)); do
  case $1 in
    --minutes) minutes=$2 ;;
    --seed) seed=$2 ;;
    --pathwise) bin=$(readlink -f "$2") ;;
    --ledger) ledger=$(readlink -f "$2") ;;
    --out) out=$2 ;;
    --datapath-args) dp_args=$2 ;;
    *) echo "chaos_soak: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift 2
done
[[ $minutes =~ ^[1-9][0-9]*$ && $seed =~ ^[0-9]+$ ]] || { echo "chaos_soak: --minutes and --seed take numbers" >&2; exit 2; }
for f in "$bin" "$ledger"; do [[ -x $f ]] || { echo "chaos_soak: $f is not built" >&2; exit 2; }; done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
replay="bench/chaos_soak.sh --minutes $minutes --seed $seed${dp_args:+ --datapath-args \"$dp_args\"}"
echo "chaos_soak: seed $seed; replay: $replay"
rc=0
# shellcheck disable=SC2086
"$root/tests/testbed/testbed" run --kernel 6.12 --topology tcp:2 --multipath off \
  --timeout $((minutes * 60 + 600)) --out "$work" --quiet \
  "$root/tests/testbed/cases/chaos_soak.sh" "$bin" "$ledger" "$minutes" "$seed" $dp_args || rc=$?
o=$work
[[ -s $o/ledger.json ]] || { echo "chaos_soak: no ledger report (exit $rc); console: $o/testbed-console.log" >&2; tail -30 "$o/testbed-console.log" >&2; exit 1; }
{
  echo "# chaos soak: pathwise datapath under a random fault schedule, with the acknowledged-write ledger"
  echo "# date: $(date -u +%FT%TZ)  revision: $(git -C "$root" rev-parse --short HEAD)  host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# replay: $replay"
  echo "# guest: 6.12, NVMe/TCP x2, namespace 1 = memory-backed null_blk under dm (linear, flakey, delay)"
  echo
  echo "## result"
  jq -r '"acknowledged writes lost: \(.violations.lost)  ghost (older over newer): \(.violations.ghost)  foreign: \(.violations.foreign)  torn: \(.violations.torn)  misplaced: \(.violations.misplaced)  unreadable at the end: \(.verification.unreadable)"' "$o/ledger.json"
  jq -r '"verified blocks: \(.verification.blocks_ok)/\(.verification.blocks)"' "$o/ledger.json"
  echo "ledger exit: $rc (0: nothing lost, everything verified)"
  echo
  echo "## I/O (the ledger, 8 jobs, 64 MiB region)"
  jq -r '.counts | to_entries[] | "\(.key): \(.value)"' "$o/ledger.json"
  echo
  echo "## the datapath's summary (stderr at SIGTERM)"
  cat "$o/summary.txt" 2>/dev/null || true
  echo
  echo "## faults injected ($(wc -l <"$o/faults.txt"))"
  cat "$o/faults.txt"
} >"$out"
echo "chaos_soak: wrote $out"
cat "$out" | sed -n 6,10p
exit "$rc"
