# SPDX-License-Identifier: Apache-2.0
# The chaos soak (bench/chaos_soak.sh runs it): `pathwise datapath` over
# both paths of namespace 1 (a memory-backed null_blk under a dm device,
# so target-side faults can be switched in), the acknowledged-write ledger
# writing, reading, flushing, zeroing and discarding through it, and a
# random fault schedule drawn from SEED for MINUTES: link flaps, both
# links down for less than the no-path wait, ANA changes, controller
# resets, disconnect and connect, netem delay and loss, stalled writes cut
# off by a reset (ghost writes), target-side write errors and delays.
# Each fault is one line in $TB_OUT/faults.txt. At the end the ledger
# verifies the whole region; the acknowledged writes lost must be 0.
# Args: PATHWISE LEDGER MINUTES SEED [DATAPATH_ARGS...]
. "$TB_SCRIPT_DIR/assert.sh"
. "$TB_SCRIPT_DIR/dm_lib.sh"
bin=$1 ledger=$2 minutes=$3 seed=$4
shift 4
[[ $TB_MULTIPATH == off ]] || fail "needs --multipath off"
RANDOM=$seed
MiB=$((1 << 20))

tb_dm_setup || fail "namespace 1 on dm"
sleep 2
tb_refresh

"$bin" datapath --namespace auto --io-timeout 2s --no-path-timeout 20s --ana-interval 2s \
  "$@" >"$TB_OUT/device.txt" 2>"$TB_OUT/server.log" &
dp_pid=$!
tb_wait 20 test -s "$TB_OUT/device.txt" || { cat "$TB_OUT/server.log"; fail "no device"; }
dev=$(head -1 "$TB_OUT/device.txt")
tb_require_stored_data "$dev" || fail "no data check against a target that keeps nothing"
"$ledger" --device "$dev" --size $((64 * MiB)) --jobs 8 --seed "$seed" \
  --stop-file "$TB_OUT/stop" --verify-retry-seconds 60 \
  --report "$TB_OUT/ledger.json" --state "$TB_OUT/ledger.state" \
  >"$TB_OUT/ledger.txt" 2>"$TB_OUT/ledger.err" &
ledger_pid=$!

# One fault: a name and a duration, undone before it returns.
inject() { # name path seconds
  local f=$1 i=$2 d=$3 c
  case $f in
    link_flap) tb_path_down "$i" && sleep "$d" && tb_path_up "$i" ;;
    all_down) tb_path_down 0 && tb_path_down 1 && sleep "$d" && tb_path_up 0 && tb_path_up 1 ;;
    ana_inaccessible) tb_path_ana "$i" inaccessible && sleep "$d" && tb_path_ana "$i" optimized ;;
    ana_non_optimized) tb_path_ana "$i" non-optimized && sleep "$d" && tb_path_ana "$i" optimized ;;
    reset) tb_refresh && nvme reset "/dev/${TB_CTRLS[i]}" && sleep "$d" ;;
    reconnect) tb_ctrl_disconnect "$i" && sleep "$d" && tb_ctrl_reconnect "$i" ;;
    delay) tc qdisc add dev "tbh$i" root netem delay 40ms 10ms && sleep "$d" && tc qdisc del dev "tbh$i" root ;;
    loss) tc qdisc add dev "tbh$i" root netem loss 5% && sleep "$d" && tc qdisc del dev "tbh$i" root ;;
    ghost)
      tc qdisc add dev "tbh$i" root netem delay 3s limit 100000 && sleep 0.5 && tb_refresh &&
        { nvme reset "/dev/${TB_CTRLS[i]}" & }
      c=$!
      sleep "$d"
      tc qdisc del dev "tbh$i" root
      wait "$c"
      ;;
    target_error_writes)
      tb_dm_table "0 $TB_DM_SECTORS flakey /dev/nullb0 0 0 5 1 error_writes" && sleep "$d" &&
        tb_dm_table "0 $TB_DM_SECTORS linear /dev/nullb0 0"
      ;;
    target_delay)
      tb_dm_table "0 $TB_DM_SECTORS delay /dev/nullb0 0 200" && sleep "$d" &&
        tb_dm_table "0 $TB_DM_SECTORS linear /dev/nullb0 0"
      ;;
  esac
}
faults=(link_flap link_flap all_down ana_inaccessible ana_non_optimized reset reconnect
  delay loss ghost target_error_writes target_delay)
tb_wait 120 grep -q "running" "$TB_OUT/ledger.err" || { cat "$TB_OUT/ledger.err"; fail "the ledger did not start"; }
end=$((SECONDS + minutes * 60))
n=0
: >"$TB_OUT/faults.txt"
while ((SECONDS < end)); do
  f=${faults[RANDOM % ${#faults[@]}]}
  i=$((RANDOM % 2))
  d=$((2 + RANDOM % 9))
  gap=$((3 + RANDOM % 8))
  [[ $f == all_down ]] && d=$((2 + RANDOM % 12)) # below --no-path-timeout
  t=$SECONDS
  if inject "$f" "$i" "$d"; then rc=ok; else rc="failed to inject"; fi
  n=$((n + 1))
  printf 't=%ds fault=%s path=%d duration=%ds %s\n' "$t" "$f" "$i" "$d" "$rc" | tee -a "$TB_OUT/faults.txt"
  kill -0 "$dp_pid" 2>/dev/null || fail "the datapath died after fault $n ($f)"
  sleep "$gap"
done
touch "$TB_OUT/stop"
wait "$ledger_pid"
lrc=$?
cat "$TB_OUT/ledger.txt"
kill -TERM "$dp_pid"
wait "$dp_pid"
echo "datapath exit status $?"
tail -4 "$TB_OUT/server.log" | tee "$TB_OUT/summary.txt"
tb_dm_teardown
echo "faults injected: $n"
((lrc == 0)) || fail "the ledger failed (exit $lrc): $(jq -c '.violations' "$TB_OUT/ledger.json")"
pass "chaos soak: $n faults in $minutes min, no acknowledged write lost"
