# SPDX-License-Identifier: Apache-2.0
# tb_path_loss (20%) slows one path; so does tb_path_rate (8 Mbit/s of read
# data, ~4 ms a 4k read); tb_path_down takes a path's link away (its
# controller leaves "live"); tb_path_up brings it back to live.
. "$TB_SCRIPT_DIR/assert.sh"
tb_iopolicy round-robin || fail "iopolicy"
tb_path_loss 0 20 || fail "loss"
fio_path_reads --runtime=6 --iodepth=8 --output="$TB_OUT/fio-loss.txt"
((T0 * R1 >= 3 * T1 * R0)) || fail "path 0 under 20% loss is not at least 3x slower than path 1"
pass "lossy path at least 3x slower"
tb_path_clear 0 || fail "clear"
tc qdisc show dev tbh0 | grep -q netem && fail "netem still on tbh0"
pass "netem cleared"

tb_path_rate 0 8 || fail "rate"
fio_path_reads --runtime=6 --iodepth=8 --output="$TB_OUT/fio-rate.txt"
((T0 * R1 >= 3 * T1 * R0)) || fail "path 0 at 8 Mbit/s is not at least 3x slower than path 1"
pass "rate-limited path at least 3x slower"
tb_path_clear 0 || fail "clear"
tc -n tgt qdisc show dev tbt0 | grep -q netem && fail "netem still on tbt0"
pass "rate cleared"

c0=${TB_CTRLS[0]}
tb_path_down 0 || fail "down"
tb_wait 30 eval "[[ \$(cat /sys/class/nvme/$c0/state) != live ]]" ||
  fail "$c0 still live 30 s after its link went down"
pass "$c0 left live: $(cat /sys/class/nvme/$c0/state)"
dd if="$TB_HEAD" of=/dev/null bs=4k count=64 iflag=direct status=none ||
  fail "read through the head with path 0 down"
pass "I/O completes with path 0 down"
tb_path_up 0 || fail "up"
tb_wait 60 eval "[[ \$(cat /sys/class/nvme/$c0/state) == live ]]" ||
  fail "$c0 not live 60 s after its link came back ($(cat /sys/class/nvme/$c0/state))"
pass "$c0 live again"
