# SPDX-License-Identifier: Apache-2.0
# The userspace multipath datapath (`pathwise datapath`) on NVMe/TCP with
# native multipath off, on a second namespace added to the subsystem, a
# tmpfs file (nvmet's file backend: what Write Zeroes does there is checked
# below; namespace 1, the memory-backed null_blk, has the fault matrix,
# data_fault.sh). One line each for a namespace that does not
# exist and for an ambiguous auto; then /dev/ublkbN over both paths of
# namespace 2 (ublk_drv loaded by the datapath itself), fio
# randrw 4k with crc32c verification, I/O seen on both paths' links (the
# passthru commands are not in the namespaces' /sys/block stat on 6.12);
# the queue threads pinned to their queues' CPUs;
# then path 0's link goes down mid-run and comes back: fio verification
# passes with no error, and path 0 carries I/O again afterwards; then, in
# another fio verify run, path 0's ANA state goes inaccessible (the
# datapath learns it from the ANA status of its next command and the log
# page it then reads): path 0's link stops carrying I/O while path 1's
# does, and when path 0 is optimized again (seen at the next periodic read,
# --ana-interval 2s) it carries I/O again, verification passing
# throughout; SIGTERM removes the device with nothing left behind.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/assert.sh"
bin=$1
[[ $TB_MULTIPATH == off ]] || fail "needs --multipath off"

out=$("$bin" datapath --namespace nvme9n9 2>&1)
expect_eq "exit status for a missing namespace" "$?" 2
expect_eq "message for a missing namespace" "$out" \
  "pathwise: no such namespace: nvme9n9 (want auto, an identity such as uuid.<uuid>, or a per-controller name such as nvme0n1)"

uuid=5f0c2a8e-6d1b-4c3e-9a7f-0d2b8c4e6a10
img=/dev/shm/datapath-ns2.img
truncate -s 256M "$img" || fail "truncate $img"
ns2=$TB_CFS/subsystems/$TB_NQN/namespaces/2
mkdir "$ns2" && echo "$img" >"$ns2/device_path" && echo 1 >"$ns2/buffered_io" &&
  echo "$uuid" >"$ns2/device_uuid" && echo 1 >"$ns2/enable" || fail "adding namespace 2"
ns2_paths() { grep -l "$uuid" /sys/class/nvme/nvme*/nvme*n*/wwid 2>/dev/null | wc -l; }
tb_wait 20 eval '(( $(ns2_paths) == 2 ))' || fail "namespace 2 not seen on both paths"
pass "namespace 2 on both paths"

out=$("$bin" datapath --namespace auto 2>&1)
expect_eq "exit status for an ambiguous auto" "$?" 2
expect_eq "message for an ambiguous auto" "$out" \
  "pathwise: --namespace auto: several namespaces have more than one path; pick one of $(cat "/sys/block/${TB_PATHS[0]}/wwid"), uuid.$uuid"

link_bytes() { # i: bytes both ways on path i's link
  local d=/sys/class/net/tbh$1/statistics
  echo $(($(cat $d/rx_bytes) + $(cat $d/tx_bytes)))
}

[[ ! -e /dev/ublk-control ]] || fail "/dev/ublk-control exists before the datapath ran"
"$bin" datapath --namespace "uuid.$uuid" --queues 2 --depth 64 --io-timeout 2s \
  --no-path-timeout 30s --ana-interval 2s >"$TB_OUT/device.txt" 2>"$TB_OUT/server.log" &
pid=$!
if ! tb_wait 15 test -s "$TB_OUT/device.txt"; then
  cat "$TB_OUT/server.log" >&2
  fail "no device announced"
fi
dev=$(head -1 "$TB_OUT/device.txt")
cat "$TB_OUT/server.log"
[[ $dev == /dev/ublkb* && -b $dev ]] || fail "'$dev' is not a ublk block device"
tb_require_stored_data "$dev" || fail "$dev does not store data: no verification against it"
expect_eq "device size" "$(blockdev --getsize64 "$dev")" $((256 << 20))
expect_eq "the device's I/O scheduler" "$(cat "/sys/block/${dev#/dev/}/queue/scheduler")" \
  "[none] mq-deadline "
tb_wait 5 grep -q "scheduler none" "$TB_OUT/server.log" ||
  fail "no 'scheduler none' in the serving line: $(cat "$TB_OUT/server.log")"
# Each queue's thread runs on the CPUs blk-mq maps to its queue: with 2
# queues on the guest's 2 vCPUs, one CPU each.
if (($(nproc) == 2)); then
  qcpus=()
  for q in 0 1; do
    for t in /proc/$pid/task/*; do
      [[ $(cat "$t/comm" 2>/dev/null) == "pw-ublk-q$q" ]] &&
        qcpus+=("$(awk '/^Cpus_allowed_list/ { print $2 }' "$t/status")")
    done
  done
  expect_eq "queue threads' CPUs" "${qcpus[*]}" "0 1"
fi

fio_verify() { # name runtime [fio args]
  local name=$1 runtime=$2
  shift 2
  fio --eta=never --name="$name" --filename="$dev" --direct=1 --ioengine=io_uring \
    --rw=randrw --bs=4k --iodepth=16 --size=64M --time_based --runtime="$runtime" \
    --verify=crc32c --verify_fatal=1 --verify_backlog=256 \
    --output-format=json --output="$TB_OUT/fio-$name.json" "$@"
}
fio_check() { # name
  local err reads writes
  # From the report's first brace: fio stopped by a signal says so above it.
  read -r err reads writes < <(sed -n '/^{/,$p' "$TB_OUT/fio-$1.json" |
    jq -r '.jobs[0] | "\(.error) \(.read.total_ios) \(.write.total_ios)"')
  expect_eq "fio $1 error" "$err" 0
  ((reads > 200 && writes > 200)) || fail "fio $1: too little I/O: $reads reads, $writes writes"
  pass "fio $1 verified: $reads reads, $writes writes"
}

b0=$(link_bytes 0) b1=$(link_bytes 1)
fio_verify randrw 8 || { cat "$TB_OUT/fio-randrw.json" >&2; fail "fio randrw with verification"; }
fio_check randrw
d0=$(($(link_bytes 0) - b0)) d1=$(($(link_bytes 1) - b1))
echo "link bytes during randrw: path 0 $d0, path 1 $d1"
((d0 > 4 << 20 && d1 > 4 << 20)) || fail "I/O did not go to both paths ($d0, $d1 bytes)"
pass "I/O went to both paths"

# Path 0 down mid-run: in-flight commands there end when the kernel gives
# up on the link; new ones go to path 1 once path 0 misses --io-timeout.
fio_verify failover 16 &
fio_pid=$!
sleep 3
tb_path_down 0 || fail "tb_path_down 0"
sleep 7
tb_path_up 0 || fail "tb_path_up 0"
wait "$fio_pid" || { cat "$TB_OUT/fio-failover.json" >&2; fail "fio verify across the path failure"; }
fio_check failover

# Path 0 is probed back into use once its controller has reconnected.
tb_wait 20 eval '[[ $(cat /sys/class/nvme/${TB_CTRLS[0]}/state) == live ]]' ||
  fail "path 0's controller did not reconnect"
sleep 2
b0=$(link_bytes 0)
fio_verify back 3 || fail "fio after path 0 came back"
fio_check back
d0=$(($(link_bytes 0) - b0))
((d0 > 1 << 20)) || fail "path 0 carries no I/O after it came back ($d0 bytes)"
pass "path 0 back in use ($d0 bytes)"

# The datapath's /metrics, scraped during I/O: each path of namespace 2
# has I/O under the agent's names (pathwise_path_io_completed_total), and
# promtool accepts the whole exposition (~4 s of VM time).
fio_verify metrics 3 &
fio_pid=$!
sleep 1.5
curl -sf http://127.0.0.1:9879/metrics >"$TB_OUT/datapath-metrics.prom" ||
  fail "curl the datapath's /metrics"
wait "$fio_pid" || fail "fio during the metrics scrape"
promtool check metrics <"$TB_OUT/datapath-metrics.prom" || fail "promtool check metrics (datapath)"
for f in $(grep -l "$uuid" /sys/class/nvme/nvme*/nvme*n*/wwid); do
  p=$(basename "$(dirname "$f")")
  n=$(awk -v p="path=\"$p\"" '/^pathwise_path_io_completed_total\{/ && index($0, p) { s += $NF }
    END { print s + 0 }' "$TB_OUT/datapath-metrics.prom")
  ((n > 0)) || fail "no I/O of path $p in the datapath's /metrics"
  echo "datapath /metrics: path $p $n I/Os"
done
expect_eq "datapath /healthz" "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9879/healthz)" 200
pass "datapath /metrics: both paths' I/O, promtool clean"
# The pathwise selector's scoring in the same scrape, under the agent's
# scoring names: each path's read EWMA under a second, its read weight
# 1..64 with the two summing to 62..64 (each is floored), as many
# selections as completed I/Os at least (a retry is one more), and its
# in-flight count within the device's 2 queues x 64.
metric() { # name path [label filter]: the sample's value ("" when none)
  awk -v n="$1{" -v p="path=\"$2\"" -v f="${3:-}" \
    'index($0, n) == 1 && index($0, p) && (f == "" || index($0, f)) { print $NF; exit }' \
    "$TB_OUT/datapath-metrics.prom"
}
grep -q '^pathwise_datapath_info{.*policy="pathwise"} 1$' "$TB_OUT/datapath-metrics.prom" ||
  fail "datapath not on the pathwise policy"
wsum=0
for f in $(grep -l "$uuid" /sys/class/nvme/nvme*/nvme*n*/wwid); do
  p=$(basename "$(dirname "$f")")
  ewma=$(metric pathwise_path_latency_ewma_seconds "$p" 'op_group="read"')
  w=$(metric pathwise_path_weight "$p" 'op_group="read"')
  sel=$(metric pathwise_datapath_path_selections_total "$p" 'policy="pathwise"')
  inf=$(metric pathwise_datapath_path_inflight "$p")
  ios=$(awk -v p="path=\"$p\"" '/^pathwise_path_io_completed_total\{/ && index($0, p) { s += $NF }
    END { print s + 0 }' "$TB_OUT/datapath-metrics.prom")
  echo "datapath /metrics: path $p read EWMA ${ewma}s, weight $w, $sel selections, $ios I/Os, $inf in flight"
  awk -v e="$ewma" 'BEGIN { exit !(e > 0 && e < 1) }' || fail "path $p: read EWMA '$ewma'"
  ((w >= 1 && w <= 64)) || fail "path $p: read weight '$w'"
  ((sel >= ios && ios > 0)) || fail "path $p: $sel selections for $ios I/Os"
  [[ -n $inf ]] && ((inf >= 0 && inf <= 128)) || fail "path $p: '$inf' in flight"
  wsum=$((wsum + w))
done
((wsum >= 62 && wsum <= 64)) || fail "read weights sum to $wsum"
pass "datapath /metrics: the selector's EWMAs, weights, selections and in-flight counts"
# ANA: path 0 inaccessible mid-run, then optimized again. Each wait polls;
# fio runs until the checks are done and is then told to stop (SIGINT:
# it ends its jobs and writes its report). Its runtime only bounds it: the
# five waits take up to 10 s each on a loaded host, where the datapath's
# ANA log reads can time out and take a retry (a fixed 20 s ran out on a
# host building beside it, and 40 s on a host running the lab beside it).
p0=$(basename "$(dirname "$(grep -l "$uuid" /sys/class/nvme/"${TB_CTRLS[0]}"/nvme*n*/wwid)")")
grows() { # i bytes since: path i's link moved more than `bytes` since `since`
  (($(link_bytes "$1") - $3 > $2))
}
log_has() { grep -q "$1" "$TB_OUT/server.log"; }
ana_lines() { grep -c "pathwise: path $p0: ANA $1" "$TB_OUT/server.log"; }
running() { kill -0 "$fio_pid" 2>/dev/null || fail "fio ana ended before the ANA checks did"; }
fio_verify ana 120 &
fio_pid=$!
b0=$(link_bytes 0)
tb_wait 10 grows 0 $((1 << 20)) "$b0" || fail "fio ana: no I/O on path 0 before the flip"
n_inacc=$(ana_lines inaccessible)
tb_path_ana 0 inaccessible || fail "tb_path_ana 0 inaccessible"
tb_wait 10 eval '(( $(ana_lines inaccessible) > n_inacc ))' ||
  fail "the datapath did not log path 0 ($p0) ANA inaccessible"
running
b0=$(link_bytes 0) b1=$(link_bytes 1)
tb_wait 10 grows 1 $((4 << 20)) "$b1" || fail "path 1 carries no I/O while path 0 is inaccessible"
running
d0=$(($(link_bytes 0) - b0)) d1=$(($(link_bytes 1) - b1))
echo "link bytes while path 0 is inaccessible: path 0 $d0, path 1 $d1"
# Path 0's link still carries the periodic ANA log reads and keep-alives.
((d0 < 256 << 10)) || fail "path 0 still carries I/O while inaccessible ($d0 bytes)"
pass "I/O moved to path 1 while path 0 was ANA inaccessible ($d0 vs $d1 bytes)"
n_opt=$(ana_lines optimized)
tb_path_ana 0 optimized || fail "tb_path_ana 0 optimized"
tb_wait 10 eval '(( $(ana_lines optimized) > n_opt ))' ||
  fail "the datapath did not log path 0 ($p0) ANA optimized"
running
b0=$(link_bytes 0)
tb_wait 10 grows 0 $((1 << 20)) "$b0" || fail "path 0 carries no I/O after it is optimized again"
running
pass "path 0 back in use after ANA optimized"
# fio_pid is the subshell running fio_verify: the signal goes to fio.
pkill -INT -P "$fio_pid" -x fio || fail "no fio to stop under $fio_pid"
rc=0
wait "$fio_pid" || rc=$?
# fio exits 128 when a signal ended it; its report says whether it erred.
((rc == 0 || rc == 128)) || { cat "$TB_OUT/fio-ana.json" >&2; fail "fio verify across the ANA flip (exit $rc)"; }
fio_check ana

# Write Zeroes and Discard through the device, as the block layer sends
# them (BLKZEROOUT, BLKDISCARD): an 8 MiB pattern past fio's 64 MiB, 2 MiB
# of it zeroed, then 2 MiB discarded. The device takes Write Zeroes
# (write_zeroes_max_bytes > 0), so zeroed blocks must read back as zeroes
# and the blocks around both ranges keep the pattern. The testbed's
# namespace refuses Write Zeroes: nvmet's file backend zeroes with
# FALLOC_FL_ZERO_RANGE, which tmpfs lacks. The datapath then completes the
# request with EOPNOTSUPP, as the kernel's driver maps Invalid Opcode /
# Invalid Field, and the block layer writes zero pages instead (the kernel
# logs it); a namespace that takes the command moves almost nothing on the
# links. Either way is checked for what it must do. Linux promises nothing
# of discarded blocks (queue/discard_zeroes_data is 0 on every device since
# 4.12, and sysfs shows no DLFEAT): what they read back as is reported,
# not checked. ~2 s of VM time.
q=/sys/block/$(basename "$dev")/queue
zmax=$(cat "$q/write_zeroes_max_bytes") dmax=$(cat "$q/discard_max_bytes")
dgran=$(cat "$q/discard_granularity") dzero=$(cat "$q/discard_zeroes_data" 2>/dev/null || echo 0)
echo "device limits: write_zeroes_max_bytes $zmax, discard_max_bytes $dmax, discard_granularity $dgran, discard_zeroes_data $dzero"
((zmax > 0)) || fail "the device takes no Write Zeroes (write_zeroes_max_bytes 0)"
((dmax > 0 && dgran > 0 && (1 << 20) % dgran == 0)) ||
  fail "the device takes no 1 MiB-aligned Discard ($dmax, granularity $dgran)"
pat=$TB_OUT/pattern.bin
head -c $((8 << 20)) /dev/urandom >"$pat"
dd if="$pat" of="$dev" bs=1M seek=128 count=8 oflag=direct conv=notrunc status=none ||
  fail "writing the pattern"
region() { # first_mib count_mib: the device's bytes there
  dd if="$dev" bs=1M skip="$1" count="$2" iflag=direct status=none
}
same_as_pattern() { # first_mib count_mib
  cmp -s <(region "$1" "$2") <(dd if="$pat" bs=1M skip=$(($1 - 128)) count="$2" status=none)
}
zeroes() { cmp -s -n $(($2 << 20)) <(region "$1" "$2") /dev/zero; }
same_as_pattern 128 8 || fail "the pattern did not read back"
refused() { dmesg | grep -c "operation not supported error, dev $(basename "$dev"), .*(WRITE_ZEROES)"; }
n_refused=$(refused)
b0=$(link_bytes 0) b1=$(link_bytes 1)
blkdiscard -z -o $((130 << 20)) -l $((2 << 20)) "$dev" || fail "blkdiscard -z"
moved=$(($(link_bytes 0) - b0 + $(link_bytes 1) - b1))
zeroes 130 2 || fail "blocks zeroed by Write Zeroes do not read back as zeroes"
same_as_pattern 128 2 && same_as_pattern 132 4 || fail "Write Zeroes changed blocks outside its range"
# Requests the datapath completed with an error: the refused Write Zeroes.
wz_failed=$(($(refused) - n_refused))
if ((wz_failed > 0)); then
  how="the namespace refused the command (EOPNOTSUPP), the block layer wrote zero pages"
elif ((moved < 1 << 20)); then
  how="one Write Zeroes command per range"
else
  fail "2 MiB of zeroes moved $moved bytes on the links, yet no Write Zeroes was refused"
fi
pass "Write Zeroes: 2 MiB read back as zeroes, the rest intact; $how ($moved bytes on the links)"
blkdiscard -o $((133 << 20)) -l $((2 << 20)) "$dev" || fail "blkdiscard"
same_as_pattern 132 1 && same_as_pattern 135 1 || fail "Discard changed blocks outside its range"
if zeroes 133 2; then dz=zeroes; else dz="not zeroes"; fi
((dzero == 0)) || [[ $dz == zeroes ]] || fail "discard_zeroes_data 1, but discarded blocks are not zeroes"
pass "Discard: accepted, the rest intact; discarded blocks read back as $dz (not promised)"
curl -sf http://127.0.0.1:9879/metrics >"$TB_OUT/datapath-metrics-2.prom" || fail "curl /metrics"
n=$(awk '/^pathwise_head_io_completed_total\{/ && index($0, "op=\"discard\"") { s += $NF }
  END { print s + 0 }' "$TB_OUT/datapath-metrics-2.prom")
((n > 0)) || fail "no Discard in the datapath's /metrics"
pass "Discard counted in /metrics (op discard: $n)"

kill -TERM "$pid"
wait "$pid"
expect_eq "datapath exit status after SIGTERM" "$?" 0
cat "$TB_OUT/server.log"
grep -q "pathwise: path $p0: .* [1-9][0-9]* failovers" "$TB_OUT/server.log" ||
  fail "no failover counted on path 0 ($p0)"
grep -q "requests, $wz_failed failed" "$TB_OUT/server.log" || fail "requests failed"
grep -q "removed $dev: [0-9]* block requests, $wz_failed failed, 0 abandoned at shutdown" \
  "$TB_OUT/server.log" || fail "I/O failed or was stuck at removal"
shopt -s nullglob
left=(/dev/ublkb* /dev/ublkc* /sys/class/ublk-char/*)
expect_eq "ublk devices left behind" "${left[*]}" ""
if dmesg | grep -E "WARNING|BUG:"; then
  fail "kernel warnings during the run"
fi
pass "datapath: verified over both paths, failed over and back, ANA flip followed, removed"
