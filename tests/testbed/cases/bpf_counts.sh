# SPDX-License-Identifier: Apache-2.0
# eBPF sampler, every I/O counted once: for a fixed amount of direct 4k
# random reads and writes on the head, head completed == path 0 + path 1 ==
# fio's own I/O count (fio JSON), per op and in bytes; the head histogram is
# the exact merge of its paths' (every bucket), and its p99 comes from it.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
tb_iopolicy round-robin || fail "iopolicy"
# The head's own I/O series, against its paths': --metrics.profile=full
# (the default profile leaves them to sum by head).
bpf_start_agent "$1" --metrics.profile=full
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]} head=$(basename "$TB_HEAD")
before=$(bpf_scrape before)
n_ios=3000
fio --eta=never --name=counts --filename="$TB_HEAD" --direct=1 --ioengine=libaio --rw=randrw \
  --rwmixread=70 --bs=4k --iodepth=8 --io_size=$((n_ios * 4096)) --randrepeat=1 \
  --output-format=json --output="$TB_OUT/fio.json" || fail "fio"
after=$(bpf_scrape after)
fio_reads=$(jq '.jobs[0].read.total_ios' "$TB_OUT/fio.json")
fio_writes=$(jq '.jobs[0].write.total_ios' "$TB_OUT/fio.json")
echo "fio: $fio_reads reads, $fio_writes writes"
expect_eq "fio I/Os" "$((fio_reads + fio_writes))" "$n_ios"
for op in read write; do
  [[ $op == read ]] && want=$fio_reads || want=$fio_writes
  h=$(prom_delta "$before" "$after" pathwise_head_io_completed_total head="$head" op=$op)
  a=$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p0" op=$op)
  b=$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p1" op=$op)
  echo "$op: head $h, path0 $a, path1 $b, fio $want"
  ((a > 0 && b > 0)) || fail "$op: round-robin used only one path ($a, $b)"
  expect_eq "$op: path0 + path1" "$((a + b))" "$want"
  expect_eq "$op: head completed" "$h" "$want"
  expect_eq "$op: head bytes" \
    "$(prom_delta "$before" "$after" pathwise_head_io_bytes_total head="$head" op=$op)" "$((want * 4096))"
  # Exact merge: every cumulative bucket of the head = sum over its paths.
  diff <(hist_buckets "$after" pathwise_head_io_latency_seconds head="$head" op=$op) \
    <(hist_buckets "$after" pathwise_path_io_latency_seconds head="$head" op=$op) >/dev/null ||
    fail "$op: head histogram is not the merge of its paths"
  pass "$op: head histogram = merge of the paths' ($(hist_buckets "$after" pathwise_head_io_latency_seconds head="$head" op=$op | wc -l) buckets)"
  expect_eq "$op: head histogram count" \
    "$(prom_sum "$after" pathwise_head_io_latency_seconds_count head="$head" op=$op)" \
    "$(prom_sum "$after" pathwise_head_io_completed_total head="$head" op=$op)"
  q=$(hist_quantile 0.99 "$before" "$after" pathwise_head_io_latency_seconds head="$head" op=$op)
  q0=$(hist_quantile 0.99 "$before" "$after" pathwise_path_io_latency_seconds path="$p0" op=$op)
  q1=$(hist_quantile 0.99 "$before" "$after" pathwise_path_io_latency_seconds path="$p1" op=$op)
  echo "$op p99: head $q s (paths $q0 s, $q1 s)"
  # A mixture's quantile lies between its components' quantiles.
  awk -v q="$q" -v a="$q0" -v b="$q1" 'BEGIN {
    lo = a < b ? a : b; hi = a < b ? b : a; exit !(q > 0 && q >= lo && q <= hi) }' ||
    fail "$op: head p99 $q outside [$q0, $q1]"
  pass "$op: head p99 $q s from the merged histogram"
done
# No failover and nothing dropped on a healthy fabric.
expect_eq "failovers" "$(prom_sum "$after" pathwise_path_failovers_total)" 0
expect_eq "dropped (start map / start set / map full)" \
  "$(($(prom_sum "$after" pathwise_bpf_events_dropped_total reason=start_map_full) +
      $(prom_sum "$after" pathwise_bpf_events_dropped_total reason=start_collision) +
      $(prom_sum "$after" pathwise_bpf_events_dropped_total reason=io_map_full)))" 0
bpf_stop_agent
