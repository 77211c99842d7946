# SPDX-License-Identifier: Apache-2.0
# eBPF sampler, per-path latency: under round-robin with a 30 ms netem delay
# on path 0, the median from pathwise_path_io_latency_seconds is >= 30 ms on
# path 0 and < 5 ms on path 1.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
tb_iopolicy round-robin || fail "iopolicy"
tb_path_delay 0 30 || fail "delay"
# Fine buckets: the sampler's own resolution; the default coarse ones are a
# factor 2 wide, and 30 ms sits inside (16.8, 33.6] ms.
bpf_start_agent "$1" --histogram-buckets=fine
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]}
before=$(bpf_scrape before)
tb_fio --runtime=8 --iodepth=8 --output="$TB_OUT/fio.txt" || fail "fio"
after=$(bpf_scrape after)
n0=$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p0" op=read)
n1=$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p1" op=read)
m0=$(hist_quantile 0.5 "$before" "$after" pathwise_path_io_latency_seconds path="$p0" op=read)
m1=$(hist_quantile 0.5 "$before" "$after" pathwise_path_io_latency_seconds path="$p1" op=read)
echo "path0 $p0: $n0 reads, median $m0 s; path1 $p1: $n1 reads, median $m1 s"
((n0 > 20 && n1 > 20)) || fail "too few reads per path ($n0, $n1)"
awk -v m="$m0" 'BEGIN { exit !(m >= 0.030) }' || fail "path 0 median $m0 s < 30 ms"
pass "path 0 median $m0 s >= 30 ms"
awk -v m="$m1" 'BEGIN { exit !(m < 0.005) }' || fail "path 1 median $m1 s >= 5 ms"
pass "path 1 median $m1 s < 5 ms"
# The histogram counts exactly the completed I/Os.
for p in "$p0" "$p1"; do
  expect_eq "$p histogram count = completed" \
    "$(prom_sum "$after" pathwise_path_io_latency_seconds_count path="$p" op=read)" \
    "$(prom_sum "$after" pathwise_path_io_completed_total path="$p" op=read)"
done
bpf_stop_agent
