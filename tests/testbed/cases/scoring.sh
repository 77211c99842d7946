# SPDX-License-Identifier: Apache-2.0
# Path scoring in the agent, tcp:2: under round-robin with fio (QD8,
# 150 IOPS: path 0 still completes >= 16 I/Os a window at +30 ms, and the
# TCG guest, which runs the target too, keeps CPU for scrapes)
# running,
#  - within 3 s of a 30 ms delay on path 0: path 0 degraded, its read weight
#    <= 6 and path 1's >= 58, the advisor says queue-depth;
#  - within 20 s of clearing it: the read weights rebalance (path 0 >= 24)
#    and path 0 is healthy again (10 s when only reads went out; a write or
#    flush during the delay holds that group's EWMA until it is
#    idle_windows old, then recover_windows clean windows: 15 windows);
#  - ANA inaccessible on path 0: failed, weight 0.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
tb_iopolicy round-robin || fail "iopolicy"
bpf_start_agent "$1"
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]}
sub=$TB_SUBSYS
prom=/tmp/scoring.prom

tb_fio --runtime=120 --iodepth=8 --rate_iops=150 --output="$TB_OUT/fio.txt" &
fio_pid=$!
trap 'tb_fio_stop $fio_pid; kill $bpf_pid 2>/dev/null' EXIT

# Times are integer microseconds from bash's EPOCHREALTIME: no fork for a
# clock read (processes are dear in a TCG guest that also runs fio and the
# target).
now_us() { NOW_US=${EPOCHREALTIME/./}; }

# sample PHASE: polls /api/v1/topology over bash's /dev/tcp and parses it
# in bash: no process at all per poll (forks and execs cost a second or more
# in a TCG guest that also runs fio and the target; /metrics is 100 KB, the
# JSON 2 KB). Sets TS_US/TS (time since t0 when the response had arrived:
# the state it shows held by then), H0 (path 0's health), W0 W1 (read
# weights), E0 E1 (read EWMA, s), ADV (recommended iopolicy); logs one line.
sample() {
  local line block= h= e= name= status= fd
  exec {fd}<>"/dev/tcp/127.0.0.1/${bpf_url##*:}" || fail "connect to pathwise"
  printf 'GET /api/v1/topology HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&"$fd"
  H0=- W0=-1 W1=-1 E0=- E1=- ADV=-
  # nlohmann's dump(2): one key per line, keys sorted (health < latency_ewma
  # < name < weight within a path).
  while IFS= read -r -t 5 line <&"$fd"; do
    [[ -n $status ]] || status=$line
    case $line in
      *'"iopolicy_recommended": "'*) line=${line#*: \"}; ADV=${line%%\"*} ;;
      *'"health": "'*) line=${line#*: \"}; h=${line%%\"*} ;;
      *'"latency_ewma_seconds": {'*) block=ewma ;;
      *'"weight": {'*) block=weight ;;
      *'}'*) block= ;;
      *'"name": "'*) line=${line#*: \"}; name=${line%%\"*} ;;
      *'"read": '*)
        line=${line#*: }
        line=${line%,}
        if [[ $block == ewma ]]; then
          e=${line/null/-}
        elif [[ $block == weight && $name == "$p0" ]]; then
          W0=$line H0=$h E0=$e
        elif [[ $block == weight && $name == "$p1" ]]; then
          W1=$line E1=$e
        fi
        ;;
    esac
  done
  exec {fd}<&-
  [[ $status == *" 200 "* ]] || fail "GET /api/v1/topology: '$status'"
  now_us
  TS_US=$((NOW_US - T0_US))
  printf -v TS '%d.%02d' $((TS_US / 1000000)) $((TS_US % 1000000 / 10000))
  echo "$1 +${TS}s path0 $H0 w=$W0 ewma=${E0}s | path1 w=$W1 ewma=${E1}s | advice $ADV"
}

# metrics_agree PHASE CONDITION: the same state in /metrics (pathwise_path_*
# and pathwise_subsystem_iopolicy_recommended), not timed.
metrics_agree() {
  local phase=$1 cond=$2
  scrape "$bpf_url/metrics" "$prom" || fail "scrape"
  H0=$(awk -v p="$p0" '/^pathwise_path_health\{/ && index($0, "path=\"" p "\"") && $NF == 1 {
    match($0, /state="[a-z]+"/); print substr($0, RSTART + 7, RLENGTH - 8) }' "$prom")
  W0=$(prom_values "$prom" pathwise_path_weight path="$p0" op_group=read)
  W1=$(prom_values "$prom" pathwise_path_weight path="$p1" op_group=read)
  ADV=$(awk -v s="$sub" '/^pathwise_subsystem_iopolicy_recommended\{/ && index($0, "subsystem=\"" s "\"") && $NF == 1 {
    match($0, /iopolicy="[a-z-]+"/); print substr($0, RSTART + 10, RLENGTH - 11) }' "$prom")
  E0=$(prom_values "$prom" pathwise_path_latency_ewma_seconds path="$p0" op_group=read)
  E1=$(prom_values "$prom" pathwise_path_latency_ewma_seconds path="$p1" op_group=read)
  echo "$phase /metrics: path0 $H0 w=$W0 ewma=${E0:--}s | path1 w=$W1 ewma=${E1:--}s | advice $ADV"
  : "${E0:=-}" "${E1:=-}"
  eval "$cond" || fail "$phase: /metrics does not show '$cond'"
  pass "$phase: /metrics agrees"
  cp "$prom" "$TB_OUT/$phase.prom"
}

# within PHASE SECONDS CONDITION: samples until CONDITION (a shell
# expression over the sample's variables) holds in a scrape that returned at
# most SECONDS after t0; fails otherwise.
within() {
  local phase=$1 limit=$2 cond=$3
  while :; do
    sample "$phase"
    ((TS_US <= limit * 1000000)) || fail "$phase: '$cond' not met within ${limit}s"
    if eval "$cond"; then
      pass "$phase: '$cond' in the scrape that returned at +${TS}s (limit ${limit}s)"
      return 0
    fi
  done
}

# Baseline: both paths measured, healthy, symmetric.
sleep 4
now_us
T0_US=$NOW_US
within baseline 10 '[[ $H0 == healthy && $E0 != - && $E1 != - ]]'
metrics_agree baseline '[[ $H0 == healthy && $E0 != - && $E1 != - ]]'

# fault NAME CMD...: runs CMD, then starts the clock (T0_US): the fault is
# in place when the helper returns. How long the helper itself took in the
# TCG guest is logged.
fault() {
  local name=$1 start
  shift
  now_us
  start=$NOW_US
  "$@" || fail "$name"
  now_us
  T0_US=$NOW_US
  printf '%s: %s took %d ms\n' "$name" "$*" $(((T0_US - start) / 1000))
}

fault delay tb_path_delay 0 30
within delay 3 '[[ $H0 == degraded && $ADV == queue-depth ]] && ((W0 <= 6 && W1 >= 58))'
metrics_agree delay '[[ $H0 == degraded && $ADV == queue-depth ]] && ((W0 <= 6 && W1 >= 58))'

fault clear tb_path_clear 0
within clear 20 '[[ $H0 == healthy ]] && ((W0 >= 24 && W1 <= 40))'
metrics_agree clear '[[ $H0 == healthy ]] && ((W0 >= 24 && W1 <= 40))'

fault ana tb_path_ana 0 inaccessible
within ana 10 '[[ $H0 == failed ]] && ((W0 == 0))'
metrics_agree ana '[[ $H0 == failed ]] && ((W0 == 0 && W1 == 64))'
expect_eq "path 0 weights (read, write, other) when inaccessible" \
  "$(prom_values "$prom" pathwise_path_weight path="$p0" | tr '\n' ' ')" "0 0 0 "
"$1" topology >"$TB_OUT/topology.txt" || fail "pathwise topology"
cat "$TB_OUT/topology.txt"
grep -q "$p0 .* inaccessible failed weight=0/0/0" "$TB_OUT/topology.txt" ||
  fail "topology does not show path 0 failed with weight 0"
pass "topology shows path 0 failed, weight 0"

tb_fio_stop "$fio_pid"
trap 'kill $bpf_pid 2>/dev/null' EXIT
bpf_stop_agent
