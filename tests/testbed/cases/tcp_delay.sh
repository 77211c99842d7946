# SPDX-License-Identifier: Apache-2.0
# Under round-robin, a 30 ms netem delay on path 0 makes its mean read latency
# (from /sys/block/<path>/stat deltas) at least 10x path 1's.
. "$TB_SCRIPT_DIR/assert.sh"
tb_iopolicy round-robin || fail "iopolicy"
tb_path_delay 0 30 || fail "delay"
fio_path_reads --runtime=8 --iodepth=8 --output="$TB_OUT/fio.txt"
# mean0 >= 10*mean1  <=>  T0*R1 >= 10*T1*R0
((T0 * R1 >= 10 * T1 * R0)) || fail "path 0 is not 10x slower than path 1"
pass "path 0 mean latency >= 10x path 1"
((T0 / R0 >= 30)) || fail "path 0 mean latency below the 30 ms delay"
pass "path 0 mean latency >= 30 ms"
