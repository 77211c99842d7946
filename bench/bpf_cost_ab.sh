#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A/B of the block programs' cost per I/O: two builds of pathwise_bpf_tool
# (say, before and after a change to bpf/), interleaved rounds on one loop
# device on tmpfs, each round fio randread 4k QD32 io_uring for RUNTIME s
# under one tool then the other. Prints per round "A ns/IO IOPS B ns/IO
# IOPS": run_time_ns of the pw_* programs / pw_done runs with
# kernel.bpf_stats_enabled=1, i.e. bench/bpf_overhead.sh's "raw" ns/IO
# (the accounting floor, ~124 ns here, included in both), then each
# tracepoint's ns per run: "issue N complete N".
# Usage: bench/bpf_cost_ab.sh TOOL_A TOOL_B   (root; env ROUNDS, RUNTIME;
#   ARGS_A, ARGS_B: extra tool flags, e.g. --force_own_start;
#   PLACEMENT=same|cross: where fio and the loop device's worker run,
#   bench/placement.sh; the workqueue mask is restored on exit;
#   BATCH: I/Os fio submits and reaps per system call, as in
#   bench/bpf_overhead.sh, default 1.)
set -euo pipefail
A=$1 B=$2 ROUNDS=${ROUNDS:-6} RUNTIME=${RUNTIME:-5}
ARGS_A=${ARGS_A:-} ARGS_B=${ARGS_B:-} BATCH=${BATCH:-1}
[[ $BATCH =~ ^[1-9][0-9]*$ && $BATCH -le 32 ]] || { echo "bpf_cost_ab: BATCH must be 1..32 (the queue depth)" >&2; exit 2; }
# shellcheck source=bench/placement.sh
. "$(dirname "$0")/placement.sh"
work=$(mktemp -d /tmp/seq-ab.XXXXXX)
mkdir -p $work/t; mount -t tmpfs -o size=600M tmpfs $work/t
fallocate -l 512M $work/t/b.img
loop=$(losetup --find --show --direct-io=on $work/t/b.img)
dd if=/dev/zero of=$loop bs=1M count=512 oflag=direct status=none
cleanup() {
  losetup -d $loop; umount $work/t; sysctl -q kernel.bpf_stats_enabled=0
  placement_restore
}
trap cleanup EXIT
placement_apply
sysctl -q kernel.bpf_stats_enabled=1
fio_iops() { fio --name=b --filename=$loop --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=32 --time_based --runtime=$RUNTIME --ramp_time=1 --randrepeat=0 --iodepth_batch_submit=$BATCH --iodepth_batch_complete_min=$BATCH "${fio_cpu[@]}" --output-format=json | jq '.jobs[0].read.iops'; }
run() { # tool args -> "ns_per_io iops issue ns complete ns"
  rm -f $work/ready
  # shellcheck disable=SC2086  # $2: flags, split on purpose
  "$1" $2 --no_nvme --interval=1 --ready_file=$work/ready >$work/out 2>$work/err &
  local pid=$!
  for _ in $(seq 100); do [[ -e $work/ready ]] && break; sleep 0.1; done
  local iops; iops=$(fio_iops)
  kill -INT $pid; wait $pid || true
  awk -v iops="$iops" '/^prog /{ n = 0; c = 0
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^run_time_ns=/) { split($i, a, "="); n = a[2]; ns += n }
        if ($i ~ /^run_cnt=/) { split($i, b, "="); c = b[2]; if ($2 ~ /^pw_done/) d += c } }
      if ($2 ~ /^pw_issue/) { in_ns += n; in_c += c }
      if ($2 ~ /^pw_done/) { dn_ns += n; dn_c += c } }
    END { printf "%.1f %.0f issue %.1f complete %.1f\n", ns / d, iops,
          in_c ? in_ns / in_c : 0, dn_c ? dn_ns / dn_c : 0 }' $work/out
}
fio_iops >/dev/null
for r in $(seq $ROUNDS); do
  echo "round $r A $(run "$A" "$ARGS_A") B $(run "$B" "$ARGS_B")"
done
