#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where one I/O's time goes, the kernel's NVMe multipath against pathwise's
# ublk datapath, in the latency-bound scenario of datapath_vs_kernel.sh
# (lb-symmetric: netem +BASE ms on both paths, fio randread 4k 2 jobs x
# iodepth 2, io_uring, direct). One testbed boot per side (kernel: --multipath
# on, round-robin; datapath: --multipath off), each configuration run plain,
# traced (tracefs events, a private instance, trace clock mono) and plain
# again; bench/datapath_latency_trace.py pairs the events per I/O and prints
# each segment's mean, p50 and p90.
#
#   bench/datapath_latency_trace.sh [--traced S] [--plain S] [--numjobs N]
#       [--iodepth N] [--base-delay MS] [--sides "kernel datapath"]
#       [--policy round-robin] [--datapath-args "--queues 1 --depth 64"]
#       [--pathwise BIN] [--variant "NAME|BIN|ARGS"]... [--work DIR]
#       [--out FILE] [--label TEXT] [--fio-args "--cpus_allowed=0"]
#
# --variant: another datapath build or flags, run after the main one in the
# datapath's boot (plain, traced, plain), analysed the same way.
# --work DIR keeps the raw traces; a side whose results are in DIR is not
# run again (analysis only). Writes FILE (default
# bench/results/datapath_latency_breakdown.txt; notes below a "## notes"
# line are kept). VM time: ~(15 s + (2 x PLAIN + TRACED + ~30 s) per
# configuration) per side.
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
traced=4 plain=10 numjobs=2 iodepth=2 base_delay=5 policy=round-robin
sides="kernel datapath" dp_args="--queues 1 --depth 64" variants="" work="" label="" fio_args=""
bin=$root/build/pathwise
out=$root/bench/results/datapath_latency_breakdown.txt

die() {
  echo "datapath_latency_trace: $*" >&2
  exit 1
}

while (($#)); do
  case $1 in
    --traced) traced=$2 ;;
    --plain) plain=$2 ;;
    --numjobs) numjobs=$2 ;;
    --iodepth) iodepth=$2 ;;
    --base-delay) base_delay=$2 ;;
    --sides) sides=$2 ;;
    --policy) policy=$2 ;;
    --datapath-args) dp_args=$2 ;;
    --pathwise) bin=$2 ;;
    --variant) variants+="${variants:+;}$2" ;;
    --work) work=$2 ;;
    --out) out=$2 ;;
    --label) label=$2 ;;
    --fio-args) fio_args=$2 ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
  esac
  shift 2 || die "$1 needs a value"
done

testbed=$root/tests/testbed/testbed
case_script=$root/bench/datapath_latency_trace_case.sh
analyzer=$root/bench/datapath_latency_trace.py
command -v fio >/dev/null || die "fio is not installed (apt-get install fio); the guest runs the host's"
command -v jq >/dev/null || die "jq is not installed"
command -v python3 >/dev/null || die "python3 is not installed (the analyzer)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is not installed"
if [[ " $sides " == *" datapath "* ]]; then
  [[ -x $bin ]] || die "no pathwise binary at $bin (build it: ninja -C build pathwise)"
fi
"$testbed" prepare --kernel 6.12 >/dev/null || die "testbed prepare --kernel 6.12 failed"

[[ -n $work ]] || work=$(mktemp -d /tmp/datapath_latency_trace.XXXXXX)
mkdir -p "$work"
echo "datapath_latency_trace: work directory $work"

for side in $sides; do
  dir=$work/$side
  if [[ -s $dir/rows.txt ]] && ls "$dir"/trace-*.txt >/dev/null 2>&1; then
    echo "datapath_latency_trace: $side: already in $dir"
    continue
  fi
  mp=on
  [[ $side == datapath ]] && mp=off
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "datapath_latency_trace: $side ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
  rc=0
  # shellcheck disable=SC2086 # dp_args is a list of flags
  flock /tmp/pathwise-testbed.lock "$testbed" run --kernel 6.12 --topology tcp:2 \
    --multipath "$mp" --timeout 1800 --quiet --out "$dir" \
    "$case_script" "$side" "$traced" "$plain" "$numjobs" "$iodepth" "$base_delay" \
    "$bin" "$policy" "$([[ $side == datapath ]] && echo "$variants")" "$fio_args" $dp_args || rc=$?
  if ((rc != 0)); then
    tail -20 "$dir/testbed-console.log" >&2 2>/dev/null
    die "$side: testbed run exited $rc (logs in $dir)"
  fi
done

{
  echo "# datapath_latency_breakdown: one I/O's time, kernel multipath vs pathwise datapath (bench/datapath_latency_trace.sh)"
  [[ -n $label ]] && echo "# run: $label"
  echo "# pathwise: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- datapath || echo ' (+ uncommitted changes)'), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# guest: 6.12 testbed (QEMU TCG, 2 vCPUs, tcp:2 over veth to nvmet), netem +${base_delay} ms on both paths"
  echo "# fio: randread 4k ${numjobs}x${iodepth}, io_uring, direct${fio_args:+, $fio_args}; plain runs ${plain} s, traced ${traced} s"
  echo "# kernel: head device, iopolicy round-robin; datapath: --policy $policy $dp_args"
  [[ -n $variants ]] && echo "# variants: $variants"
  echo
  python3 "$analyzer" "$work"/*/
  if [[ -f $out ]] && grep -q '^## notes' "$out"; then
    echo
    sed -n '/^## notes/,$p' "$out"
  fi
} >"$out.new"
mv "$out.new" "$out"
cat "$out"
echo "datapath_latency_trace: wrote $out (raw traces in $work)"
