#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the kernel's double accounting of multipath I/O costs, and what
# `--head-iostats=off` gives back: IOPS of random 4k reads on the
# multipath head of the testbed (6.12 guest) in interleaved rounds, with
# the head's queue/iostats on (the kernel's default) and off, each without
# and with pathwise's eBPF sampler (bench/head_iostats_case.sh). The ratio
# the switch is for: off+pw / on (iostats off and pathwise counting every
# I/O, against the kernel as shipped).
#
#   bench/head_iostats.sh [--topology loop:2|pcie:2|tcp:2] [--rounds N]
#       [--runtime S] [--numjobs N] [--iodepth N] [--target volatile|stored]
#       [--toggle S] [--window S]
#       [--pathwise BIN] [--out FILE] [--work DIR]
#
# loop:2 (nvmet's loop transport, two controllers of one subsystem, a
# null_blk namespace that keeps nothing: the runs only read) by default: no
# network and no emulated device per I/O, so the block layer's share of
# each I/O, and with it the accounting's, is the largest the testbed can
# show. pcie:2 (QEMU's emulated controllers) is bimodal under TCG: runs of
# one configuration differed up to 7x (bench/results/head_iostats_pcie.txt).
# Two measurements (bench/head_iostats_case.sh says how): toggled windows,
# the head's accounting flipped every WINDOW seconds within one fio run for
# TOGGLE seconds, without and with pathwise (the accounting's own cost,
# drift cancelled), and whole-run rounds of four configurations (what only
# a restart shows: the sampler's cost, the switch as pathwise sets it).
# Writes FILE (default bench/results/head_iostats.txt). VM time: ~(60 s +
# 2 x TOGGLE + 4 x ROUNDS x (RUNTIME + ~3 s)).
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
topology=loop:2 rounds=6 runtime=8 numjobs=2 iodepth=32 target=volatile work=""
toggle=360 window=1
bin=$root/build/pathwise
out=$root/bench/results/head_iostats.txt
die() {
  echo "head_iostats: $*" >&2
  exit 1
}
while (($#)); do
  case $1 in
    --topology) topology=$2 ;;
    --rounds) rounds=$2 ;;
    --runtime) runtime=$2 ;;
    --numjobs) numjobs=$2 ;;
    --iodepth) iodepth=$2 ;;
    --target) target=$2 ;;
    --toggle) toggle=$2 ;;
    --window) window=$2 ;;
    --pathwise) bin=$2 ;;
    --out) out=$2 ;;
    --work) work=$2 ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
  esac
  shift 2 || die "$1 needs a value"
done
command -v fio >/dev/null || die "fio is not installed; the guest runs the host's"
command -v jq >/dev/null || die "jq is not installed"
[[ -x $bin ]] || die "no pathwise binary at $bin (build it: ninja -C build pathwise)"
testbed=$root/tests/testbed/testbed
"$testbed" prepare --kernel 6.12 >/dev/null || die "testbed prepare --kernel 6.12 failed"
[[ -n $work ]] || work=$(mktemp -d /tmp/head_iostats.XXXXXX)
mkdir -p "$work"
echo "head_iostats: work directory $work ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
flock /tmp/pathwise-testbed.lock "$testbed" run --kernel 6.12 --topology "$topology" --target "$target" \
  --timeout 1800 --quiet --out "$work" "$root/bench/head_iostats_case.sh" \
  "$bin" "$rounds" "$runtime" "$numjobs" "$iodepth" "$toggle" "$window" ||
  die "testbed run failed (logs in $work)"
rows=$work/rows.txt windows=$work/windows.txt
(($(wc -l <"$rows") == 4 * rounds)) || die "$(wc -l <"$rows") rows, want $((4 * rounds)) (logs in $work)"
# Each phase's windows last toggle seconds in all, each window at least
# window seconds: at least 8 off windows, or no interval worth quoting.
for ph in bare pw; do
  n=$(awk -v ph=$ph '$1 == ph && $3 == "off"' "$windows" | wc -l)
  ((n >= 8)) || die "phase $ph: $n off windows, want at least 8 (logs in $work)"
done

# windows PHASE: each off window's IOPS against the mean of the on windows
# either side of it (linear drift cancels); the median of those ratios
# with its distribution-free 95 % interval (order statistics of a median),
# and the phase's mean IOPS with the knob on and off.
windows() {
  awk -v ph="$1" '$1 == ph { st[$2] = $3; r[$2] = $4 / $5; n = $2 > n ? $2 : n }
    END {
      for (w = 1; w < n; w++)
        if (st[w] == "off" && st[w - 1] == "on" && st[w + 1] == "on")
          q[++k] = r[w] / ((r[w - 1] + r[w + 1]) / 2)
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t }
      med = k % 2 ? q[(k + 1) / 2] : (q[k / 2] + q[k / 2 + 1]) / 2
      lo = int(k / 2 - 0.98 * sqrt(k)); hi = int(k / 2 + 0.98 * sqrt(k)) + 1
      if (lo < 1) lo = 1; if (hi > k) hi = k
      for (w = 0; w <= n; w++) { if (st[w] == "on") { son += r[w]; non++ } else { soff += r[w]; noff++ } }
      printf "off/on %.4f (95 %% interval %.4f to %.4f, %d off windows); IOPS on %.0f, off %.0f",
        med, q[lo], q[hi], k, son / non, soff / noff }' "$windows"
}

# stats CONFIG: "mean sd runs"
stats() {
  awk -v c="$1" '$2 == c { x[++n] = $3; s += $3 }
    END { m = s / n; for (i = 1; i <= n; i++) v += (x[i] - m) ^ 2
          printf "mean %9.1f  sd %7.1f  runs:", m, sqrt(v / (n - 1))
          for (i = 1; i <= n; i++) printf " %.0f", x[i]; print "" }' "$rows"
}
# ratio A B: the median over rounds of A/B, and the ratio of the means
ratio() {
  awk -v a="$1" -v b="$2" '$2 == a { x[$1] = $3; sa += $3 } $2 == b { y[$1] = $3; sb += $3 }
    END { n = 0; for (r in x) if (r in y) q[++n] = x[r] / y[r]
          for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (q[j] < q[i]) { t = q[i]; q[i] = q[j]; q[j] = t }
          med = n % 2 ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
          printf "median of per-round ratios %.4f, ratio of means %.4f", med, sa / sb }' "$rows"
}
{
  echo "# Head iostats: the kernel's double accounting, and --head-iostats=off (bench/head_iostats.sh)"
  echo "date:      $(date -u +%FT%TZ)"
  echo "pathwise:  $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "testbed:   kernel 6.12 guest (QEMU TCG, 2 vCPUs), topology $topology (target $target), multipath on, iopolicy round-robin"
  echo "workload:  fio randread 4k io_uring direct, $numjobs jobs x QD$iodepth"
  echo "toggled:   one fio run per phase, the head's queue/iostats flipped every ${window}s (a sleep: each window's length measured) for ${toggle}s; I/Os counted on the path disks"
  echo "rounds:    ${runtime}s x $rounds rounds per configuration, order rotated each round"
  echo "host:      $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) at the end"
  echo
  echo "## Toggled windows (the head's accounting alone, drift cancelled)"
  echo "bare (no pathwise):                $(windows bare)"
  echo "pw (pathwise serve, eBPF sampler): $(windows pw)"
  echo
  echo "## Rounds (whole runs; the sampler's cost needs a restart)"
  for c in on off on+pw off+pw; do printf '%-8s %s\n' "$c:" "$(stats "$c")"; done
  echo
  echo "off/on (the kernel's head accounting alone):     $(ratio off on)"
  echo "on+pw/on (pathwise's sampler, accounting kept):  $(ratio on+pw on)"
  echo "off+pw/on (--head-iostats=off against as shipped): $(ratio off+pw on)"
  echo "off+pw/on+pw (what the switch gives a pathwise host): $(ratio off+pw on+pw)"
  echo "the seed's figure for head accounting: 7.4 % of peak IOPS (off/on 1.08)"
} | tee "$out"
