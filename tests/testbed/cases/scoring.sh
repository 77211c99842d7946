# Path scoring in the agent (issue 5), tcp:2: under round-robin with fio
# running,
#  - within 3 s of a 30 ms delay on path 0: path 0 degraded, its read weight
#    <= 6 and path 1's >= 58, the advisor says queue-depth;
#  - within 10 s of clearing it: the read weights rebalance (path 0 >= 24)
#    and path 0 is healthy again;
#  - ANA inaccessible on path 0: failed, weight 0.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/bpf_lib.sh"
tb_iopolicy round-robin || fail "iopolicy"
bpf_start_agent "$1"
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]}
sub=$TB_SUBSYS
prom=/tmp/scoring.prom

tb_fio --runtime=120 --iodepth=16 --output="$TB_OUT/fio.txt" &
fio_pid=$!
trap 'kill $fio_pid $bpf_pid 2>/dev/null' EXIT

# sample PHASE: scrapes and sets TS (seconds since t0 when the scrape
# started), H0 (path 0's health), W0 W1 (read weights), E0 E1 (read EWMA,
# ms), ADV (recommended iopolicy); logs one line. One awk over the page:
# processes are dear in a TCG guest running fio.
sample() {
  local start
  start=$(date +%s.%N)
  scrape "$bpf_url/metrics" "$prom" || fail "scrape"
  read -r TS H0 W0 W1 E0 E1 ADV < <(awk -v p0="$p0" -v p1="$p1" -v s="$sub" -v t0="$t0" -v t="$start" '
    function lv(name,   i) { # the value of label "name" on this line
      i = index($0, name "=\"")
      if (!i) return ""
      v = substr($0, i + length(name) + 2)
      return substr(v, 1, index(v, "\"") - 1)
    }
    /^pathwise_path_health\{/ && $NF == 1 && lv("path") == p0 { h0 = lv("state") }
    /^pathwise_path_weight\{/ && lv("op_group") == "read" {
      if (lv("path") == p0) w0 = $NF; else if (lv("path") == p1) w1 = $NF }
    /^pathwise_path_latency_ewma_seconds\{/ && lv("op_group") == "read" {
      if (lv("path") == p0) e0 = sprintf("%.2f", $NF * 1000)
      else if (lv("path") == p1) e1 = sprintf("%.2f", $NF * 1000) }
    /^pathwise_subsystem_iopolicy_recommended\{/ && $NF == 1 && lv("subsystem") == s { adv = lv("iopolicy") }
    END {
      printf "%.2f %s %s %s %s %s %s\n", t - t0, h0 ? h0 : "-", w0 != "" ? w0 : -1,
        w1 != "" ? w1 : -1, e0 ? e0 : "-", e1 ? e1 : "-", adv ? adv : "-"
    }' "$prom")
  echo "$1 +${TS}s path0 $H0 w=$W0 ewma=${E0}ms | path1 w=$W1 ewma=${E1}ms | advice $ADV"
}

# within PHASE SECONDS CONDITION: samples until CONDITION (a shell
# expression over the sample's variables) holds in a scrape started at most
# SECONDS after t0; fails otherwise.
within() {
  local phase=$1 limit=$2 cond=$3
  while :; do
    sample "$phase"
    if awk -v t="$TS" -v l="$limit" 'BEGIN { exit !(t > l) }'; then
      fail "$phase: '$cond' not met within ${limit}s"
    fi
    if eval "$cond"; then
      pass "$phase: '$cond' in the scrape at +${TS}s (limit ${limit}s)"
      return 0
    fi
    sleep 0.2
  done
}

# Baseline: both paths measured, healthy, symmetric.
sleep 4
t0=$(date +%s.%N)
within baseline 10 '[[ $H0 == healthy && $E0 != - && $E1 != - ]]'
cp "$prom" "$TB_OUT/baseline.prom"

# The clock starts when the helper returns (netem is in place); how long the
# helper itself took in this TCG guest is logged.
# fault NAME CMD...: runs CMD, then starts the clock t0.
fault() {
  local name=$1 start
  shift
  start=$(date +%s.%N)
  "$@" || fail "$name"
  t0=$(date +%s.%N)
  echo "$name: '$*' took $(awk -v a="$start" -v b="$t0" 'BEGIN { printf "%.2f", b - a }')s"
}

fault delay tb_path_delay 0 30
within delay 3 '[[ $H0 == degraded && $ADV == queue-depth ]] && ((W0 <= 6 && W1 >= 58))'
cp "$prom" "$TB_OUT/delay.prom"

fault clear tb_path_clear 0
within clear 10 '[[ $H0 == healthy ]] && ((W0 >= 24 && W1 <= 40))'
cp "$prom" "$TB_OUT/clear.prom"

fault ana tb_path_ana 0 inaccessible
within ana 10 '[[ $H0 == failed ]] && ((W0 == 0))'
expect_eq "path 0 weights (read, write, other) when inaccessible" \
  "$(prom_values "$prom" pathwise_path_weight path="$p0" | tr '\n' ' ')" "0 0 0 "
cp "$prom" "$TB_OUT/ana.prom"
"$1" topology >"$TB_OUT/topology.txt" || fail "pathwise topology"
cat "$TB_OUT/topology.txt"
grep -q "$p0 .* inaccessible failed weight=0/0/0" "$TB_OUT/topology.txt" ||
  fail "topology does not show path 0 failed with weight 0"
pass "topology shows path 0 failed, weight 0"

kill "$fio_pid" 2>/dev/null
wait "$fio_pid" 2>/dev/null
trap 'kill $bpf_pid 2>/dev/null' EXIT
bpf_stop_agent
