# SPDX-License-Identifier: Apache-2.0
# eBPF sampler, failover: with reads in flight under round-robin, path 0's
# link goes down (keep-alive expiry fails its requests over to path 1) and
# later comes back. fio completes every I/O; pathwise_path_failovers_total of
# path 0 grows; head completed == path 0 + path 1 == fio's count (a
# failed-over request is not an I/O: nothing counted twice, nothing lost).
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
tb_iopolicy round-robin || fail "iopolicy"
# The head's own I/O series, against its paths': --metrics.profile=full
# (the default profile leaves them to sum by head).
bpf_start_agent "$1" --metrics.profile=full
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]} c0=${TB_CTRLS[0]} head=$(basename "$TB_HEAD")
before=$(bpf_scrape before)
n_ios=12000
# ~30 s at 400 IOPS: the link outage (and keep-alive expiry) happens mid-run.
fio --eta=never --name=failover --filename="$TB_HEAD" --direct=1 --ioengine=libaio --rw=randread \
  --bs=4k --iodepth=16 --io_size=$((n_ios * 4096)) --rate_iops=400 --randrepeat=1 \
  --output-format=json --output="$TB_OUT/fio.json" &
fio_pid=$!
sleep 4
tb_path_down 0 || fail "path down"
echo "path 0 down at $(date +%T)"
tb_wait 30 bash -c "grep -qv live /sys/class/nvme/$c0/state" || fail "$c0 stayed live with its link down"
echo "$c0: $(cat /sys/class/nvme/$c0/state) at $(date +%T)"
sleep 3
tb_path_up 0 || fail "path up"
echo "path 0 up at $(date +%T)"
tb_wait 60 bash -c "grep -qx live /sys/class/nvme/$c0/state" || fail "$c0 did not reconnect"
echo "$c0 live again at $(date +%T)"
rc=0
wait "$fio_pid" || rc=$?
expect_eq "fio exit status" "$rc" 0
tb_refresh
after=$(bpf_scrape after)
fio_reads=$(jq '.jobs[0].read.total_ios' "$TB_OUT/fio.json")
fio_errs=$(jq '.jobs[0].error' "$TB_OUT/fio.json")
expect_eq "fio errors" "$fio_errs" 0
expect_eq "fio reads" "$fio_reads" "$n_ios"
f0=$(prom_delta "$before" "$after" pathwise_path_failovers_total path="$p0")
f1=$(prom_delta "$before" "$after" pathwise_path_failovers_total path="$p1")
a=$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p0" op=read)
b=$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p1" op=read)
h=$(prom_delta "$before" "$after" pathwise_head_io_completed_total head="$head" op=read)
e0=$(prom_delta "$before" "$after" pathwise_path_nvme_errors_total path="$p0" status_class=path)
echo "failovers: path0 $f0, path1 $f1; reads: path0 $a, path1 $b, head $h, fio $fio_reads; path0 NVMe path-class errors $e0"
((f0 > 0)) || fail "no failover counted on path 0"
pass "path 0 failovers $f0 > 0"
# nvme_complete_rq saw the real status of the failed-over commands (host
# aborted/path error, SCT 3) although the block layer reported success.
((e0 > 0)) || fail "no NVMe path-class error counted on path 0"
pass "path 0 NVMe path-class errors $e0 > 0"
expect_eq "path0 + path1 reads" "$((a + b))" "$fio_reads"
expect_eq "head reads" "$h" "$fio_reads"
expect_eq "head histogram count" \
  "$(prom_sum "$after" pathwise_head_io_latency_seconds_count head="$head" op=read)" \
  "$(prom_sum "$after" pathwise_head_io_completed_total head="$head" op=read)"
bpf_stop_agent
