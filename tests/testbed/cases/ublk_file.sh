# SPDX-License-Identifier: Apache-2.0
# The ublk front end (datapath/ublk) over its file backend, on the guest's
# ublk_drv: without the module, the one line; with it, /dev/ublkbN of the
# file's size, fio randrw 4k with crc32c verification (and a write-then-
# verify pass that proves the verification read everything back), discard
# reading back zeroes; then SIGTERM with a read the backend never answers
# (--test_hold_at): the front end fails it with EIO after its 2 s grace and
# removes every trace (block and char devices, /sys/class/ublk-char); the
# one-queue disk's I/O scheduler, none unless --scheduler kernel.
# Args: PATHWISE_UBLK_BINARY
. "$TB_SCRIPT_DIR/assert.sh"
bin=$1
img=/dev/shm/ublk-backing.img
size=$((256 << 20))
no_ublk="pathwise-ublk: ublk_drv is not loaded; the datapath needs Linux >= 6.1 with CONFIG_BLK_DEV_UBLK (modprobe ublk_drv)"

[[ ! -e /dev/ublk-control ]] || fail "/dev/ublk-control exists before modprobe"
out=$("$bin" --backend "file:$img" --size "$size" 2>&1)
expect_eq "exit status without ublk_drv" "$?" 2
expect_eq "message without ublk_drv" "$out" "$no_ublk"

modprobe ublk_drv || fail "modprobe ublk_drv"
tb_wait 5 test -c /dev/ublk-control || fail "no /dev/ublk-control after modprobe"

"$bin" --backend "file:$img" --queues 2 --depth 64 --abort_grace 2 \
  --test_hold_at $((200 << 20)) \
  >"$TB_OUT/device.txt" 2>"$TB_OUT/server.log" &
pid=$!
if ! tb_wait 10 test -s "$TB_OUT/device.txt"; then
  cat "$TB_OUT/server.log" >&2
  fail "no device announced"
fi
dev=$(head -1 "$TB_OUT/device.txt")
cat "$TB_OUT/server.log"
[[ $dev == /dev/ublkb* && -b $dev ]] || fail "'$dev' is not a ublk block device"
expect_eq "device size" "$(blockdev --getsize64 "$dev")" "$size"

fio --eta=never --name=randrw --filename="$dev" --direct=1 --ioengine=io_uring \
  --rw=randrw --bs=4k --iodepth=16 --size=64M --time_based --runtime=5 \
  --verify=crc32c --verify_fatal=1 --verify_backlog=256 --fsync=64 \
  --output-format=json --output="$TB_OUT/fio-randrw.json" ||
  { cat "$TB_OUT/fio-randrw.json" >&2; fail "fio randrw with verification"; }
read -r err reads writes iops < <(jq -r '.jobs[0] |
  "\(.error) \(.read.total_ios) \(.write.total_ios) \(.read.iops + .write.iops | floor)"' \
  "$TB_OUT/fio-randrw.json")
expect_eq "fio randrw error" "$err" 0
((reads > 500 && writes > 500)) || fail "too little I/O: $reads reads, $writes writes"
pass "randrw 4k QD16 verified: $reads reads, $writes writes, $iops IOPS"

fio --eta=never --name=verify --filename="$dev" --direct=1 --ioengine=io_uring \
  --rw=randwrite --bs=4k --iodepth=16 --offset=64M --size=16M \
  --verify=crc32c --verify_fatal=1 --do_verify=1 \
  --output-format=json --output="$TB_OUT/fio-verify.json" ||
  { cat "$TB_OUT/fio-verify.json" >&2; fail "fio write-then-verify"; }
expect_eq "bytes read back by the verify pass" \
  "$(jq '.jobs[0].read.io_bytes' "$TB_OUT/fio-verify.json")" $((16 << 20))

blkdiscard -o $((128 << 20)) -l $((1 << 20)) "$dev" || fail "blkdiscard"
cmp -n $((1 << 20)) <(dd if="$dev" bs=1M skip=128 count=1 iflag=direct status=none) \
  /dev/zero || fail "discarded range does not read back as zeroes"
pass "discard reads back zeroes"

dd if="$dev" of=/dev/null bs=4k skip=$((200 << 8)) count=1 iflag=direct \
  2>"$TB_OUT/dd.log" &
held=$!
sleep 1
kill -0 "$held" 2>/dev/null || fail "the held read finished: $(cat "$TB_OUT/dd.log")"
kill -TERM "$pid"
start=$(date +%s%N)
wait "$pid"
expect_eq "server exit status after SIGTERM" "$?" 0
ms=$((($(date +%s%N) - start) / 1000000))
wait "$held" && fail "the held read succeeded"
grep -q "Input/output error" "$TB_OUT/dd.log" || fail "held read: $(cat "$TB_OUT/dd.log")"
pass "the held read failed with EIO"
cat "$TB_OUT/server.log"
grep -q "removed $dev: .* 1 failed, 1 abandoned, 0 command errors" "$TB_OUT/server.log" ||
  fail "expected exactly the held read failed and abandoned"
((ms >= 1500 && ms < 6000)) || fail "removal took $ms ms (grace 2 s)"
pass "removed in $ms ms"
shopt -s nullglob
left=(/dev/ublkb* /dev/ublkc* /sys/class/ublk-char/*)
expect_eq "ublk devices left behind" "${left[*]}" ""

# The disk's I/O scheduler with one queue: blk-mq's default there is
# mq-deadline (--scheduler kernel keeps it), the front end's is none.
sched() { # args...: the scheduler in effect on a one-queue device
  : >"$TB_OUT/device.txt"
  "$bin" --backend "file:$img" --queues 1 "$@" >"$TB_OUT/device.txt" 2>"$TB_OUT/server-sched.log" &
  local p=$! d
  tb_wait 10 test -s "$TB_OUT/device.txt" || { cat "$TB_OUT/server-sched.log" >&2; fail "no device ($*)"; }
  d=$(head -1 "$TB_OUT/device.txt")
  cat "/sys/block/${d#/dev/}/queue/scheduler"
  kill -TERM "$p"
  wait "$p" || fail "server exit after SIGTERM ($*)"
}
expect_eq "one queue, --scheduler kernel" "$(sched --scheduler kernel)" "none [mq-deadline] "
expect_eq "one queue, default" "$(sched)" "[none] mq-deadline "
grep -q "scheduler none)" "$TB_OUT/server-sched.log" || fail "serving line: $(cat "$TB_OUT/server-sched.log")"
pass "one queue: the kernel's mq-deadline, the front end's none"
if dmesg | grep -E "WARNING|BUG|ublk.*(fail|error)"; then
  fail "kernel warnings during the run"
fi
pass "ublk front end: device created, verified, removed"
