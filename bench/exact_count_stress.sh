#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs each exact-count BPF host test RUNS times under load and reports the
# pass count and every drop it printed.
#
# Load, on top of what the test does on its own loop device: one busy loop
# per CPU, and fio (4k random read/write, libaio, QD 16) on two other loop
# devices backed by files on the root filesystem (so the host disk works
# too). Each run also reports the completions the kernel hid from the
# programs (run while a thread of PID 1 was current, on kernels with init
# isolation; see bpf/README.md), which the tests account for exactly.
#
# Usage: bench/exact_count_stress.sh [BUILD_DIR]   (default: build)
# Env:   RUNS (per test, default 50), TESTS (gtest names, space separated),
#        OUT (default bench/results/exact_count_stress.txt),
#        BUDGET_S (stop starting new runs after this many seconds; 0 = none)
# Needs root, losetup, fio; takes the bpf test lock.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
bin=$build/tests/bpf/pathwise_bpf_host_tests
RUNS=${RUNS:-50}
BUDGET_S=${BUDGET_S:-0}
OUT=${OUT:-$here/results/exact_count_stress.txt}
TESTS=${TESTS:-"KernelStartTimeExactCounts OwnStartTimeExactCounts ExactCountsAtQueueDepth OwnStartExactCountsAtQueueDepth SpillSlotsExactCounts SpillSlotsOwnStartExactCounts"}

die() { echo "exact_count_stress: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root"
[[ -x $bin ]] || die "$bin not built"
for c in fio losetup flock; do command -v "$c" >/dev/null || die "$c missing"; done

work=$(mktemp -d /var/tmp/pathwise-stress.XXXXXX)
loops=()
pids=()
cleanup() {
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  [[ ${#pids[@]} -gt 0 ]] && wait "${pids[@]}" 2>/dev/null
  for l in "${loops[@]}"; do losetup -d "$l"; done
  rm -rf "$work"
}
trap cleanup EXIT

# Each run takes the bpf test lock on its own, so other BPF tests can run
# between runs (they then add to the load).

for n in 1 2; do
  truncate -s 256M "$work/load$n.img"
  l=$(losetup --find --show --direct-io=on "$work/load$n.img")
  loops+=("$l")
  nice -n 19 fio --name=load --filename="$l" --rw=randrw --bs=4k --direct=1 \
    --ioengine=libaio --iodepth=16 --time_based --runtime=86400 \
    --output=/dev/null &
  pids+=($!)
done
for _ in $(seq "$(nproc)"); do
  nice -n 19 bash -c 'while :; do :; done' &
  pids+=($!)
done

start=$(date +%s)
{
  echo "# exact-count BPF host tests under load: $(date -u +%FT%TZ)"
  echo "# kernel $(uname -r), $(nproc) CPUs; load (nice 19): $(nproc) busy loops," \
    "fio randrw 4k QD16 on 2 other loop devices"
  echo "# RUNS=$RUNS per test, BUDGET_S=$BUDGET_S"
} >"$work/report"
for t in $TESTS; do
  pass=0
  runs=0
  hidden=0
  for i in $(seq "$RUNS"); do
    if [[ $BUDGET_S -gt 0 && $(($(date +%s) - start)) -ge $BUDGET_S ]]; then
      break
    fi
    runs=$((runs + 1))
    if flock /tmp/pathwise-bpf.lock "$bin" --gtest_filter="BpfHostTest.$t" \
      >"$work/run.log" 2>&1; then
      pass=$((pass + 1))
      h=$(sed -n 's/^kernel hid \([0-9]*\) of.*/\1/p' "$work/run.log" | head -1)
      hidden=$((hidden + ${h:-0}))
    else
      echo "## $t run $i FAILED" >>"$work/report"
      grep -E "Expected|Which is|which is|reason|runs=|Failure" \
        "$work/run.log" | head -40 >>"$work/report"
    fi
  done
  echo "$t: $pass/$runs passed; completions hidden by the kernel" \
    "(counted in no drop reason, accounted by the test): $hidden" |
    tee -a "$work/report"
done
echo "# elapsed $(($(date +%s) - start)) s" >>"$work/report"
cp "$work/report" "$OUT"
echo "exact_count_stress: wrote $OUT"
