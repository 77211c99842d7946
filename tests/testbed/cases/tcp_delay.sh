# Under round-robin, a 30 ms netem delay on path 0 makes its mean read latency
# (from /sys/block/<path>/stat deltas) at least 10x path 1's.
. "$TB_SCRIPT_DIR/assert.sh"
tb_iopolicy round-robin || fail "iopolicy"
tb_path_delay 0 30 || fail "delay"
read -r r0a t0a _ < <(tb_path_stat 0)
read -r r1a t1a _ < <(tb_path_stat 1)
tb_fio --runtime=8 --iodepth=8 --output="$TB_OUT/fio.txt" || fail "fio"
read -r r0b t0b _ < <(tb_path_stat 0)
read -r r1b t1b _ < <(tb_path_stat 1)
r0=$((r0b - r0a)) r1=$((r1b - r1a)) t0=$((t0b - t0a)) t1=$((t1b - t1a))
echo "path0: $r0 reads, $t0 ms; path1: $r1 reads, $t1 ms"
((r0 > 20 && r1 > 20)) || fail "too few reads per path ($r0, $r1)"
# mean0 >= 10*mean1  <=>  t0*r1 >= 10*t1*r0
awk -v r0="$r0" -v r1="$r1" -v t0="$t0" -v t1="$t1" \
  'BEGIN { printf "mean read latency: path0 %.2f ms, path1 %.2f ms\n", t0/r0, t1/r1 }'
((t0 * r1 >= 10 * t1 * r0)) || fail "path 0 is not 10x slower than path 1"
pass "path 0 mean latency >= 10x path 1"
((t0 / r0 >= 30)) || fail "path 0 mean latency below the 30 ms delay"
pass "path 0 mean latency >= 30 ms"
