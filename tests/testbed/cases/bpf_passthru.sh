# SPDX-License-Identifier: Apache-2.0
# eBPF sampler, NVMe passthrough: reads through the head's char device
# ($TB_NG, fio io_uring_cmd) are exported as op="passthru" on the paths and
# the head, exactly fio's count; /sys/block/<path>/stat does not see them.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
[[ -n $TB_NG && -c $TB_NG ]] || fail "no head char device (TB_NG='$TB_NG')"
tb_iopolicy round-robin || fail "iopolicy"
# The head's own I/O series, against its paths': --metrics.profile=full
# (the default profile leaves them to sum by head).
bpf_start_agent "$1" --metrics.profile=full
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]} head=$(basename "$TB_HEAD")
before=$(bpf_scrape before)
read -r s0a _ < <(tb_path_stat 0)
read -r s1a _ < <(tb_path_stat 1)
n_ios=1000
fio --eta=never --name=passthru --filename="$TB_NG" --ioengine=io_uring_cmd --cmd_type=nvme \
  --rw=randread --bs=4k --iodepth=8 --io_size=$((n_ios * 4096)) --size=64M \
  --output-format=json --output="$TB_OUT/fio.json" || { cat "$TB_OUT/fio.json" >&2; fail "fio io_uring_cmd"; }
after=$(bpf_scrape after)
read -r s0b _ < <(tb_path_stat 0)
read -r s1b _ < <(tb_path_stat 1)
fio_reads=$(jq '.jobs[0].read.total_ios' "$TB_OUT/fio.json")
expect_eq "fio passthru reads" "$fio_reads" "$n_ios"
a=$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p0" op=passthru)
b=$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p1" op=passthru)
h=$(prom_delta "$before" "$after" pathwise_head_io_completed_total head="$head" op=passthru)
echo "passthru: path0 $a, path1 $b, head $h; sysfs reads path0 +$((s0b - s0a)), path1 +$((s1b - s1a))"
expect_eq "passthru path0 + path1" "$((a + b))" "$fio_reads"
expect_eq "passthru head" "$h" "$fio_reads"
expect_eq "passthru head bytes" \
  "$(prom_delta "$before" "$after" pathwise_head_io_bytes_total head="$head" op=passthru)" "$((fio_reads * 4096))"
expect_eq "passthru head histogram count" \
  "$(prom_sum "$after" pathwise_head_io_latency_seconds_count head="$head" op=passthru)" \
  "$(prom_sum "$after" pathwise_head_io_completed_total head="$head" op=passthru)"
expect_eq "passthru counted as read" \
  "$(prom_delta "$before" "$after" pathwise_head_io_completed_total head="$head" op=read)" 0
# Passthrough is never stamped by the kernel: every one of these latencies
# is from pathwise's own stamps, and none was lost to a full set.
grep -q '^pathwise_bpf_events_dropped_total{reason="start_collision"}' "$after" ||
  fail "no start_collision series in $after"
expect_eq "own-stamp starts dropped (start_collision)" \
  "$(prom_delta "$before" "$after" pathwise_bpf_events_dropped_total reason=start_collision)" 0
# The kernel fact: passthrough I/O is not in the block stat files.
expect_eq "sysfs stat reads during passthru" "$((s0b - s0a + s1b - s1a))" 0
m=$(hist_quantile 0.5 "$before" "$after" pathwise_head_io_latency_seconds head="$head" op=passthru)
pass "passthru head median $m s"
bpf_stop_agent
