# SPDX-License-Identifier: Apache-2.0
# Guest half of bench/head_iostats.sh. Two measurements on the multipath
# head:
#
# Toggled windows ($TB_OUT/windows.txt, "PHASE WINDOW STATE IOS SECONDS"):
# for TOGGLE_S seconds of one fio run, the head's queue/iostats flips
# every WINDOW_S seconds (on, off, on, ...); a window's I/Os are those the
# path disks (whose own accounting stays on) completed in it. Neighbouring
# windows share whatever the emulated machine drifts by, so an off window
# against the mean of the on windows on both sides measures the head's
# accounting alone, to a fraction of a percent where whole runs differ by
# tens. Phase "bare" without pathwise, phase "pw" with pathwise serve and
# its eBPF sampler running (--head-iostats=keep: the knob is the script's).
#
# Rounds ($TB_OUT/rows.txt, "ROUND CONFIG IOPS"): whole fio runs in four
# configurations, for what only a restart shows (the sampler's own cost,
# and the switch as pathwise sets it):
#   on         the kernel's defaults, no pathwise
#   off        the head's queue/iostats 0, no pathwise
#   on+pw      pathwise serve (eBPF sampler), --head-iostats=keep
#   off+pw     pathwise serve --head-iostats=off (the switch sets it)
# The order rotates each round, so drift on a busy host spreads over all.
# Args: PATHWISE_BINARY ROUNDS RUNTIME NUMJOBS IODEPTH TOGGLE_S WINDOW_S
# The testbed's assertions (fail, pass), from the cases beside the tests.
. "$TB_SCRIPT_DIR/../tests/testbed/cases/assert.sh"
bpf_url=http://127.0.0.1:9877
pw=$1 rounds=$2 runtime=$3 numjobs=$4 iodepth=$5 toggle_s=$6 window_s=$7
head=$(basename "$TB_HEAD")
knob=/sys/block/$head/queue/iostats
rows=$TB_OUT/rows.txt
: >"$rows"
knob_is() { [[ $(cat "$knob") == "$1" ]]; }

agent() { # FLAGS...: pathwise serve with the sampler, up and settled
  "$pw" serve --web.listen-address=127.0.0.1:9877 --interval=1s --bpf=required \
    --probe-interval=0 "$@" >>"$TB_OUT/serve.log" 2>&1 &
  agent_pid=$!
  tb_wait 30 curl -sf -o /dev/null "$bpf_url/healthz" || fail "pathwise serve did not come up"
}
agent_stop() {
  kill -TERM "$agent_pid"
  wait "$agent_pid" || fail "pathwise serve exit status"
}

run() { # ROUND CONFIG
  local cfg=$2 f=$TB_OUT/fio-$1-$2.json
  case $cfg in
    on) echo 1 >"$knob" ;;
    off) echo 0 >"$knob" ;;
    on+pw) echo 1 >"$knob"; agent --head-iostats=keep ;;
    off+pw)
      echo 1 >"$knob"
      agent --head-iostats=off
      tb_wait 10 knob_is 0 || fail "--head-iostats=off left $knob at $(cat "$knob")"
      ;;
  esac
  fio --name=bench --filename="$TB_HEAD" --direct=1 --ioengine=io_uring --rw=randread \
    --bs=4k --iodepth="$iodepth" --numjobs="$numjobs" --group_reporting --time_based \
    --runtime="$runtime" --eta=never --output-format=json --output="$f" || fail "fio ($cfg)"
  [[ $cfg == *+pw ]] && agent_stop
  knob_is 1 || { [[ $cfg == off ]] && echo 1 >"$knob"; }
  knob_is 1 || fail "$knob not 1 after $cfg"
  echo "$1 $cfg $(jq '.jobs[0].read.iops' "$f")" | tee -a "$rows"
}

# path_ios: reads + writes completed on every path disk (their accounting
# is on throughout), read with builtins only.
path_ios() {
  local p f total=0
  for p in "${TB_PATHS[@]}"; do
    read -r -a f <"/sys/block/$p/stat" || return 1
    total=$((total + f[0] + f[4]))
  done
  echo "$total"
}

# toggle PHASE: one fio run with the knob flipped every window_s seconds
# (a sleep; a busy TCG guest wakes the script up to twice as late, and each
# window's own length is measured) until toggle_s seconds have passed; one
# line per window to windows.txt.
toggle() {
  local phase=$1 w=0 state t0 t1 n0 n1 fio_pid end
  # fio runs well past the windows and is stopped after them: a window
  # with no I/O in it would be a window fio had already ended.
  fio --name=toggle --filename="$TB_HEAD" --direct=1 --ioengine=io_uring --rw=randread \
    --bs=4k --iodepth="$iodepth" --numjobs="$numjobs" --time_based \
    --runtime=$((2 * toggle_s + 60)) --eta=never --output=/dev/null &
  fio_pid=$!
  sleep 2 # fio's jobs started and at depth
  n0=$(path_ios) t0=$EPOCHREALTIME
  end=$((${t0%.*} + toggle_s))
  while ((${t0%.*} < end)); do
    state=$((w % 2 == 0 ? 1 : 0))
    echo "$state" >"$knob"
    sleep "$window_s"
    n1=$(path_ios) t1=$EPOCHREALTIME
    ((n1 > n0)) || fail "$phase: no I/O completed in window $w (fio gone?)"
    echo "$phase $w $([[ $state == 1 ]] && echo on || echo off) $((n1 - n0)) $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" >>"$windows"
    n0=$n1 t0=$t1
    w=$((w + 1))
  done
  echo 1 >"$knob"
  kill -TERM "$fio_pid"
  wait "$fio_pid"
  pass "$phase: $w windows of ${window_s}s"
}

tb_iopolicy round-robin || fail "iopolicy"
configs=(on off on+pw off+pw)
# A warm-up run, not counted.
fio --name=warm --filename="$TB_HEAD" --direct=1 --ioengine=io_uring --rw=randread --bs=4k \
  --iodepth="$iodepth" --numjobs="$numjobs" --time_based --runtime=3 --eta=never \
  --output=/dev/null || fail "fio warm-up"
windows=$TB_OUT/windows.txt
: >"$windows"
toggle bare
agent --head-iostats=keep
toggle pw
agent_stop
knob_is 1 || fail "$knob not 1 after the toggled windows"
for ((r = 1; r <= rounds; r++)); do
  for ((k = 0; k < 4; k++)); do
    run "$r" "${configs[(r - 1 + k) % 4]}"
  done
done
pass "$rounds rounds x 4 configurations"
