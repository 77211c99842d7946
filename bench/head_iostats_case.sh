# SPDX-License-Identifier: Apache-2.0
# Guest half of bench/head_iostats.sh: interleaved rounds of one fio job on
# the multipath head in four configurations, one line per run to
# $TB_OUT/rows.txt ("ROUND CONFIG IOPS"):
#   on         the kernel's defaults, no pathwise
#   off        the head's queue/iostats 0, no pathwise
#   on+pw      pathwise serve (eBPF sampler), --head-iostats=keep
#   off+pw     pathwise serve --head-iostats=off (the switch sets it)
# The order rotates each round, so drift on a busy host spreads over all.
# Args: PATHWISE_BINARY ROUNDS RUNTIME NUMJOBS IODEPTH
# The testbed's assertions (fail, pass), from the cases beside the tests.
. "$TB_SCRIPT_DIR/../tests/testbed/cases/assert.sh"
bpf_url=http://127.0.0.1:9877
pw=$1 rounds=$2 runtime=$3 numjobs=$4 iodepth=$5
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

tb_iopolicy round-robin || fail "iopolicy"
configs=(on off on+pw off+pw)
# A warm-up run, not counted.
fio --name=warm --filename="$TB_HEAD" --direct=1 --ioengine=io_uring --rw=randread --bs=4k \
  --iodepth="$iodepth" --numjobs="$numjobs" --time_based --runtime=3 --eta=never \
  --output=/dev/null || fail "fio warm-up"
for ((r = 1; r <= rounds; r++)); do
  for ((k = 0; k < 4; k++)); do
    run "$r" "${configs[(r - 1 + k) % 4]}"
  done
done
pass "$rounds rounds x 4 configurations"
