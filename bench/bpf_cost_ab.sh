#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A/B of the block programs' cost per I/O: two builds of pathwise_bpf_tool
# (say, before and after a change to bpf/), interleaved rounds on one loop
# device on tmpfs, each round fio randread 4k QD32 io_uring for RUNTIME s
# under one tool then the other. Prints per round "A ns/IO IOPS B ns/IO
# IOPS": run_time_ns of the pw_* programs / pw_done runs with
# kernel.bpf_stats_enabled=1, i.e. bench/bpf_overhead.sh's "raw" ns/IO
# (the accounting floor, ~124 ns here, included in both).
# Usage: bench/bpf_cost_ab.sh TOOL_A TOOL_B   (root; env ROUNDS, RUNTIME)
set -euo pipefail
A=$1 B=$2 ROUNDS=${ROUNDS:-6} RUNTIME=${RUNTIME:-5}
work=$(mktemp -d /tmp/seq-ab.XXXXXX)
mkdir -p $work/t; mount -t tmpfs -o size=600M tmpfs $work/t
fallocate -l 512M $work/t/b.img
loop=$(losetup --find --show --direct-io=on $work/t/b.img)
dd if=/dev/zero of=$loop bs=1M count=512 oflag=direct status=none
cleanup() { losetup -d $loop; umount $work/t; sysctl -q kernel.bpf_stats_enabled=0; }
trap cleanup EXIT
sysctl -q kernel.bpf_stats_enabled=1
fio_iops() { fio --name=b --filename=$loop --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=32 --time_based --runtime=$RUNTIME --ramp_time=1 --randrepeat=0 --output-format=json | jq '.jobs[0].read.iops'; }
run() { # tool -> "ns_per_io iops"
  rm -f $work/ready
  "$1" --no_nvme --interval=1 --ready_file=$work/ready >$work/out 2>$work/err &
  local pid=$!
  for _ in $(seq 100); do [[ -e $work/ready ]] && break; sleep 0.1; done
  local iops; iops=$(fio_iops)
  kill -INT $pid; wait $pid || true
  awk -v iops="$iops" '/^prog /{for(i=1;i<=NF;i++){if($i~/^run_time_ns=/){split($i,a,"=");ns+=a[2]} if($i~/^run_cnt=/){split($i,b,"="); if($2~/^pw_done/) d+=b[2]}}} END{printf "%.1f %.0f\n", ns/d, iops}' $work/out
}
fio_iops >/dev/null
for r in $(seq $ROUNDS); do
  echo "round $r A $(run $A) B $(run $B)"
done
