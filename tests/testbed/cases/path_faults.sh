# tb_path_loss (20%) slows one path; tb_path_down takes a path's link away (its
# controller leaves "live"); tb_path_up brings it back to live.
. "$TB_SCRIPT_DIR/assert.sh"
tb_iopolicy round-robin || fail "iopolicy"
tb_path_loss 0 20 || fail "loss"
read -r r0a t0a _ < <(tb_path_stat 0)
read -r r1a t1a _ < <(tb_path_stat 1)
tb_fio --runtime=6 --iodepth=8 --output="$TB_OUT/fio-loss.txt" || fail "fio"
read -r r0b t0b _ < <(tb_path_stat 0)
read -r r1b t1b _ < <(tb_path_stat 1)
r0=$((r0b - r0a)) r1=$((r1b - r1a)) t0=$((t0b - t0a)) t1=$((t1b - t1a))
awk -v r0="$r0" -v r1="$r1" -v t0="$t0" -v t1="$t1" \
  'BEGIN { printf "20%% loss on path 0: path0 %d reads %.2f ms mean, path1 %d reads %.2f ms mean\n", r0, t0/r0, r1, t1/r1 }'
((r0 > 20 && r1 > 20)) || fail "too few reads per path ($r0, $r1)"
((t0 * r1 >= 3 * t1 * r0)) || fail "path 0 under 20% loss is not at least 3x slower than path 1"
pass "lossy path at least 3x slower"
tb_path_clear 0 || fail "clear"
tc qdisc show dev tbh0 | grep -q netem && fail "netem still on tbh0"
pass "netem cleared"

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
