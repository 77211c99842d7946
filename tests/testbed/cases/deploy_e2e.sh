# End to end, as users run it (issue 6), tcp:2:
# - pathwise with the exact container args of deploy/kubernetes/daemonset.yaml;
# - Debian's prometheus scraping it every second with the shipped rules, their
#   `for:` shortened to 5s by deploy/prometheus/override-for.sh (the
#   documented override; the rules file itself is not touched);
# - fio on the head throughout, round-robin;
# 1. healthy: no alert fires; every dashboard query returns a series (the
#    firing-alerts table is checked in phase 2 instead: it is empty by design);
# 2. tb_path_delay 0 30: PathwisePathDegraded fires for path 0 and no path
#    alert fires for path 1;
# 3. tb_path_ana 0 inaccessible: PathwisePathFailed (path 0) and
#    PathwiseSinglePathLeft (path 1) fire;
# 4. tb_path_clear 0, ANA optimized: every path alert resolves.
# Args: PATHWISE_BINARY DASHBOARD_QUERIES_JSONL
. "$TB_SCRIPT_DIR/assert.sh"
pw=$1 queries=$2
repo=$(cd "$TB_SCRIPT_DIR/../../.." && pwd)
[[ -s $queries ]] || fail "no dashboard queries at $queries (run the deploy_dashboards test first)"
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]}
prom=http://127.0.0.1:9090

mapfile -t args < <("$repo/tests/deploy/daemonset-args.sh" --args)
[[ ${args[0]} == serve ]] || fail "DaemonSet args: ${args[*]}"
port=$(printf '%s\n' "${args[@]}" | sed -nE 's/^--listen_address=.*:([0-9]+)$/\1/p')
tb_iopolicy round-robin || fail "iopolicy"
"$pw" "${args[@]}" >"$TB_OUT/pathwise.log" 2>&1 &
pw_pid=$!
tb_fio --runtime=600 --iodepth=8 --output="$TB_OUT/fio.txt" >/dev/null 2>&1 &
fio_pid=$!
prom_pid=
trap 'kill $fio_pid $pw_pid $prom_pid 2>/dev/null' EXIT
tb_wait 30 curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" || fail "pathwise (${args[*]}): no /healthz"
pass "pathwise up with the DaemonSet's args: ${args[*]}"

d=/tmp/prom
mkdir -p $d/data
"$repo/deploy/prometheus/override-for.sh" 5s >$d/rules.yml || fail "override-for.sh"
cat >$d/prometheus.yml <<CFG
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [$d/rules.yml]
scrape_configs:
  - job_name: pathwise
    static_configs: [{targets: ["127.0.0.1:$port"]}]
CFG
promtool check config $d/prometheus.yml >/dev/null || fail "promtool check config"
prometheus --config.file=$d/prometheus.yml --storage.tsdb.path=$d/data \
  --web.listen-address=127.0.0.1:9090 >"$TB_OUT/prometheus.log" 2>&1 &
prom_pid=$!

# q QUERY: the result array of an instant query, as JSON.
q() { curl -sf --max-time 10 "$prom/api/v1/query" --data-urlencode "query=$1" | jq -c '.data.result'; }
# firing: "alertname path" lines of the firing alerts, sorted.
firing() {
  q 'ALERTS{alertstate="firing"}' | jq -r '.[].metric | "\(.alertname) \(.path // .head // .subsystem // .instance)"' | sort
}
# wait_for PHASE SECONDS CONDITION: polls `firing` into $F until CONDITION.
wait_for() {
  local phase=$1 limit=$2 cond=$3 start=$(date +%s)
  while :; do
    F=$(firing)
    if eval "$cond"; then
      pass "$phase after $(($(date +%s) - start))s; firing: $(echo $F | tr '\n' ' ')"
      return 0
    fi
    (($(date +%s) - start > limit)) && { diag; echo "scrape errors: $(wc -l <"$TB_OUT/scrape-errors.log")"; tail -5 "$TB_OUT/scrape-errors.log"; fail "$phase: not within ${limit}s; firing: $(echo $F | tr '\n' ' ')"; }
    sleep 2
  done
}
# diag: what Prometheus saw, for a failure's log.
diag() {
  echo "diag: min up over 1m: $(q 'min_over_time(up[1m])' | jq -c '[.[].value[1]]')"
  echo "diag: health of $p0 now: $(q "pathwise_path_health{path=\"$p0\"} == 1" | jq -c '[.[].metric.state]')"
  echo "diag: degraded windows of $p0 in 30s: $(q "sum_over_time(pathwise_path_health{path=\"$p0\",state=\"degraded\"}[30s])" | jq -c '[.[].value[1]]')"
  echo "diag: read EWMA: $(q 'pathwise_path_latency_ewma_seconds{op_group="read"}' | jq -c '[.[] | [.metric.path, .value[1]]]')"
}
has() { grep -qx "$1" <<<"$F"; }
none_for() { ! grep -q " $1\$" <<<"$F"; }

tb_wait 60 sh -c "curl -sf '$prom/api/v1/query?query=up' | grep -q '\"value\":\[[0-9.]*,\"1\"\]'" ||
  { tail -20 "$TB_OUT/prometheus.log"; fail "prometheus: target not up within 60 s"; }
pass "prometheus scraping pathwise every second"
# Every failed scrape, with Prometheus's reason, for the log.
( while sleep 1; do
    e=$(curl -sf --max-time 2 "$prom/api/v1/targets" | grep -o '"lastError":"[^"]\+"')
    [[ -n $e ]] && echo "$(date +%T) $e"
  done >"$TB_OUT/scrape-errors.log" 2>&1 ) &
err_pid=$!
trap 'kill $fio_pid $pw_pid $prom_pid $err_pid 2>/dev/null' EXIT
# Long enough for every rate() over 1m, the 5s `for:` and the scoring EWMA.
sleep 40

# 1. healthy
F=$(firing)
[[ -z $F ]] || fail "healthy: alerts firing: $(echo $F | tr '\n' ' ')"
pass "healthy: no alert fires"
empty=0 n=0
while read -r line; do
  promql=$(jq -r .promql <<<"$line")
  where="$(jq -r '"\(.dashboard) / \(.panel) / \(.refId)"' <<<"$line")"
  n=$((n + 1))
  if [[ $promql == *ALERTS* ]]; then echo "skip (phase 2): $where"; alerts_q=$promql; continue; fi
  # A scrape that misses its 1 s deadline in the TCG guest marks every
  # series stale for that instant: retry a few times, and say so.
  for try in 1 2 3 4 5; do
    count=$(q "$promql" | jq length)
    [[ ${count:-0} -ge 1 ]] && break
    echo "retry $try: $where (min up over 10s: $(q 'min_over_time(up[10s])' | jq -c '[.[].value[1]]'), last scrape $(q 'scrape_duration_seconds' | jq -c '[.[].value[1]]') s)"
    sleep 1
  done
  if [[ ${count:-0} -ge 1 ]]; then echo "ok: $count series: $where"; else echo "EMPTY: $where: $promql"; empty=$((empty + 1)); fi
done <"$queries"
((empty == 0)) || fail "healthy: $empty of $n dashboard queries returned no series"
pass "healthy: every dashboard query returns at least one series ($n queries)"

# 2. delay on path 0
tb_path_delay 0 30 || fail "delay"
wait_for "delay: PathwisePathDegraded for $p0" 90 "has 'PathwisePathDegraded $p0'"
# For 10 s more: nothing fires for path 1, PathwisePathDegraded only for path 0.
for _ in 1 2 3 4 5; do
  sleep 2
  F=$(firing)
  none_for "$p1" || { diag; fail "delay: an alert fires for $p1: $(echo $F | tr '\n' ' ')"; }
  ! grep '^PathwisePathDegraded ' <<<"$F" | grep -vqx "PathwisePathDegraded $p0" ||
    { diag; fail "delay: PathwisePathDegraded for more than $p0"; }
  has "PathwisePathDegraded $p0" || { echo "note: PathwisePathDegraded for $p0 not firing at this poll"; diag; }
done
pass "delay: PathwisePathDegraded for $p0 only, nothing for $p1 over 10 s; all firing: $(echo $F | tr '\n' ' ')"
[[ -n ${alerts_q:-} ]] && { c=$(q "$alerts_q" | jq length); ((c >= 1)) || fail "dashboard alerts table empty while alerts fire"; pass "dashboard alerts table: $c series"; }

# 3. ANA inaccessible on path 0
tb_path_ana 0 inaccessible || fail "ana"
wait_for "inaccessible: PathwisePathFailed for $p0 and PathwiseSinglePathLeft for $p1" 90 \
  "has 'PathwisePathFailed $p0' && has 'PathwiseSinglePathLeft $p1'"

# 4. recovery
tb_path_clear 0 || fail "clear"
tb_path_ana 0 optimized || fail "ana back"
wait_for "recovered: every path alert resolved" 240 \
  "! grep -qE '^Pathwise(PathDegraded|PathFailed|SinglePathLeft|NoOptimizedPath|PathFailovers) ' <<<\"\$F\""
kill $fio_pid 2>/dev/null
curl -sf "$prom/api/v1/rules" >"$TB_OUT/rules.json" || true
