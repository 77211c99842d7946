# SPDX-License-Identifier: Apache-2.0
# End to end, as users run it, tcp:2:
# - pathwise with the exact container args of deploy/kubernetes's DaemonSet
#   (as kubectl kustomize rendered it on the host: RENDERED_DIR/base),
#   twice: a second agent with the same args on the next port stands for a
#   second host, so that the fleet rules see two hosts that reach the same
#   target ports (both agents load their own BPF programs; nothing is
#   shared between them);
# - Debian's prometheus scraping both every 2 s (timeout 2 s) with the shipped
#   rules; deploy/prometheus/override-threshold.sh sets the fleet's host-count
#   threshold to 2 (explicitly: the test does not lean on the shipped value)
#   and deploy/prometheus/override-for.sh (the documented overrides; the
#   rules file itself is not touched) shortens to 5s the `for:` of the alerts
#   this case drives or must never see in a healthy testbed. The two slow,
#   informational alerts keep their shipped `for:` (PathwiseLatencyImbalance
#   5m, PathwiseIopolicyMismatch 30m), so they rank after
#   PathwisePathDegraded (1m) here as they do in production;
# - fio on the head throughout, round-robin, rate-limited (the TCG guest also
#   runs the nvmet target and Prometheus).
# Every check compares the exact set of firing alerts ("alertname:path", or
# head, subsystem, target port address, instance for alerts without a path):
# 1. healthy: nothing fires, nothing is pending but possibly the informational
#    imbalance/mismatch; every dashboard query returns a series (the
#    firing-alerts table is checked in phase 2: empty by design), but for
#    those whose series need what these args leave off (`needs`: probes,
#    --queues, actuator decisions, the datapath), which must be answered
#    without an error and may be empty;
# 2. tb_path_delay 0 30: exactly PathwisePathDegraded for path 0 (on both
#    agents, with path 0's target port) and PathwiseTargetPortDegraded for
#    path 0's address (both hosts that use it see it degraded) fire, and for
#    10 s nothing else does (not PathwiseHostPathsDegraded: each host has one
#    port of two degraded); every fleet dashboard alerts table has a series;
#    the fleet's p99 to path 0's port is at least 30 ms and above path 1's;
#    PathwiseLatencyImbalance (head) and
#    PathwiseIopolicyMismatch (subsystem) are pending: their conditions hold,
#    only their longer `for:` keeps them from firing;
# 3. tb_path_ana 0 inaccessible: exactly PathwisePathFailed (path 0),
#    PathwiseSinglePathLeft (path 1) and PathwiseTargetPortDegraded (path 0's
#    port: failed counts too), plus PathwisePathFailovers (path 0) if
#    the ANA change failed requests over (it may or may not);
# 4. tb_path_clear 0, ANA optimized: nothing fires any more (this waits out
#    PathwisePathFailovers' 2m window when it fired).
# Args: PATHWISE_BINARY DASHBOARD_QUERIES_JSONL RENDERED_DIR
. "$TB_SCRIPT_DIR/assert.sh"
pw=$1 queries=$2 rendered=$3
repo=$(cd "$TB_SCRIPT_DIR/../../.." && pwd)
[[ -s $queries ]] || fail "no dashboard queries at $queries (run the deploy_dashboards test first)"
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]} head=${TB_HEAD##*/} subsys=$TB_SUBSYS
prom=http://127.0.0.1:9090
t0=$SECONDS

[[ -s $rendered/base/pathwise.args ]] || fail "no rendered DaemonSet args at $rendered (run the deploy_kubernetes_render test first)"
mapfile -t args <"$rendered/base/pathwise.args"
[[ ${args[0]} == serve ]] || fail "DaemonSet args: ${args[*]}"
port=$(printf '%s\n' "${args[@]}" | sed -nE 's/^--web.listen-address=.*:([0-9]+)$/\1/p')
# The second "host": the same args, listening on the next port.
port2=$((port + 1))
args2=()
for a in "${args[@]}"; do
  [[ $a == --web.listen-address=* ]] && a=--web.listen-address=:$port2
  args2+=("$a")
done
# Path 0's and 1's target ports as the fleet rules name them: the address
# without the host's own part (src_addr).
addr0=$(sed -E 's/,(src_addr|host_traddr|host_iface)=.*//' "/sys/class/nvme/${TB_CTRLS[0]}/address")
addr1=$(sed -E 's/,(src_addr|host_traddr|host_iface)=.*//' "/sys/class/nvme/${TB_CTRLS[1]}/address")
[[ $addr0 == traddr=* && $addr1 == traddr=* && $addr0 != "$addr1" ]] || fail "target port addresses: '$addr0' '$addr1'"
tb_iopolicy round-robin || fail "iopolicy"
"$pw" "${args[@]}" >"$TB_OUT/pathwise.log" 2>&1 &
pw_pid=$!
"$pw" "${args2[@]}" >"$TB_OUT/pathwise2.log" 2>&1 &
pw2_pid=$!
tb_fio --runtime=600 --iodepth=8 --rate_iops=150 --output="$TB_OUT/fio.txt" >/dev/null 2>&1 &
fio_pid=$!
prom_pid=
trap 'kill $fio_pid $pw_pid $pw2_pid $prom_pid 2>/dev/null' EXIT

# The alerts this case shortens to 5s: those it drives (phases 2-4) and those
# that must stay silent in a healthy testbed, so that "nothing fires" means
# something. Not PathwiseAgentDown (1m: a few slow scrapes in a loaded TCG
# guest are not an agent down), nor the informational imbalance/mismatch.
fast=(PathwisePathDegraded PathwisePathFailed PathwiseNoOptimizedPath PathwiseSinglePathLeft
  PathwiseBpfUnavailable PathwiseEventsDropped PathwiseTargetPortDegraded PathwiseHostPathsDegraded)
d=/tmp/prom
mkdir -p $d/data
ov=()
for a in "${fast[@]}"; do ov+=(--alert "$a"); done
"$repo/deploy/prometheus/override-threshold.sh" pathwise_target_port_degraded_hosts:min_count=2 >$d/thresholds.yml ||
  fail "override-threshold.sh"
"$repo/deploy/prometheus/override-for.sh" "${ov[@]}" 5s $d/thresholds.yml >$d/rules.yml || fail "override-for.sh"
cp $d/rules.yml "$TB_OUT/rules.yml"
# 2 s scrapes with a 2 s timeout: 1 s scrapes in this guest miss their
# deadline now and then, and a failed scrape makes every series stale, which
# resets `for:`.
cat >$d/prometheus.yml <<CFG
global:
  scrape_interval: 2s
  scrape_timeout: 2s
  evaluation_interval: 2s
rule_files: [$d/rules.yml]
scrape_configs:
  - job_name: pathwise
    static_configs: [{targets: ["127.0.0.1:$port", "127.0.0.1:$port2"]}]
CFG
prometheus --config.file=$d/prometheus.yml --storage.tsdb.path=$d/data \
  --web.listen-address=127.0.0.1:9090 >"$TB_OUT/prometheus.log" 2>&1 &
prom_pid=$!
# Prometheus took 30 to 80 s to start in this guest; meanwhile, the agent.
tb_wait 30 curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" || fail "pathwise (${args[*]}): no /healthz"
tb_wait 30 curl -sf -o /dev/null "http://127.0.0.1:$port2/healthz" || fail "pathwise (${args2[*]}): no /healthz"
pass "pathwise up twice with the DaemonSet's args: ${args[*]}, and on :$port2"

# q QUERY: the result array of an instant query, as JSON.
q() { curl -sf --max-time 10 "$prom/api/v1/query" --data-urlencode "query=$1" | jq -c '.data.result'; }
# alerts: FIRING and PENDING, sorted space-separated "alertname:label" words,
# from one query (two processes: the guest is slow to fork).
alerts() {
  local out
  out=$(curl -sf --max-time 5 "$prom/api/v1/query?query=ALERTS" | jq -r '
    [.data.result[].metric | "\(.alertstate) \(.alertname):\(.path // .head // .subsystem // .address // .instance)"]
    | unique | (map(select(startswith("firing "))  | ltrimstr("firing "))  | join(" "))
       + "|" + (map(select(startswith("pending ")) | ltrimstr("pending ")) | join(" "))') || return 1
  IFS='|' read -r FIRING PENDING <<<"$out"
}
# is_set WANT ALLOW: FIRING holds every word of WANT and nothing that is not in
# WANT or ALLOW.
is_set() {
  local w
  for w in $1; do [[ " $FIRING " == *" $w "* ]] || return 1; done
  for w in $FIRING; do [[ " $1 $2 " == *" $w "* ]] || return 1; done
}
failed_scrapes() { q 'sum(count_over_time(up[30m]) - sum_over_time(up[30m]))' | jq -r '.[0].value[1] // "?"'; }
# diag: what Prometheus saw, for a failure's log.
diag() {
  echo "diag: firing: [$FIRING] pending: [$PENDING]"
  echo "diag: failed scrapes so far: $(failed_scrapes); slowest scrape over 5m: $(q 'max_over_time(scrape_duration_seconds[5m])' | jq -c '[.[].value[1]]') s"
  echo "diag: health: $(q 'pathwise_path_health == 1' | jq -c '[.[].metric | "\(.path)=\(.state)"]')"
  echo "diag: read EWMA: $(q 'pathwise_path_latency_ewma_seconds{op_group="read"}' | jq -c '[.[] | [.metric.path, .value[1]]]')"
  echo "diag: imbalance: $(q 'pathwise_head_latency_imbalance_ratio' | jq -c '[.[] | [.metric.op_group, .value[1]]]')"
  echo "diag: recommended: $(q 'pathwise_subsystem_iopolicy_recommended == 1' | jq -c '[.[].metric.iopolicy]')"
  echo "diag: rule groups, last evaluation seconds: $(curl -sf --max-time 10 "$prom/metrics" | sed -nE 's/^prometheus_rule_group_last_duration_seconds\{rule_group=".*;([^"]*)"\} (.*)/\1=\2/p' | tr '\n' ' ')"
  echo "diag: fleet: $(q '{__name__=~"nqn_address:pathwise_hosts.*"}' | jq -c '[.[] | [.metric.__name__, .metric.address, .value[1]]]')"
}
# wait_set PHASE SECONDS WANT [ALLOW]: polls every second until the firing set
# is WANT plus any of ALLOW; fails after SECONDS.
wait_set() {
  local phase=$1 limit=$2 start=$SECONDS
  while :; do
    if alerts && is_set "$3" "${4:-}"; then
      pass "$phase after $((SECONDS - start))s (t=$((SECONDS - t0))s); firing: [$FIRING] pending: [$PENDING]"
      return 0
    fi
    ((SECONDS - start > limit)) && { diag; fail "$phase: not within ${limit}s; firing: [$FIRING], wanted [$3] (allowed [${4:-}])"; }
    sleep 1
  done
}
# hold PHASE SECONDS WANT: for SECONDS, and until at least 3 polls were
# answered (a loaded guest's Prometheus may take seconds per query; at most
# 60 s more), every poll's firing set is exactly WANT.
hold() {
  local phase=$1 start=$SECONDS until=$((SECONDS + $2)) n=0
  while ((SECONDS < until || n < 3)); do
    ((SECONDS < until + 60)) || fail "$phase: only $n polls of ALERTS answered in $((SECONDS - start)) s"
    sleep 1
    alerts || continue
    n=$((n + 1))
    is_set "$3" "" || { diag; fail "$phase: firing [$FIRING], expected exactly [$3]"; }
  done
  pass "$phase: exactly [$3] fired at each of $n polls over $((SECONDS - start)) s"
}

tb_wait 120 sh -c "curl -sf '$prom/api/v1/query?query=count(up==1)' | grep -q '\"value\":\[[0-9.]*,\"2\"\]'" ||
  { tail -20 "$TB_OUT/prometheus.log"; fail "prometheus: both targets not up within 120 s"; }
pass "prometheus scraping both agents every 2 s (t=$((SECONDS - t0))s)"
up_at=$SECONDS

# 1. healthy. Every dashboard query but the alerts table, all in one curl per
# round; a query still empty is retried (rate() needs two scrapes, the
# scoring a few windows) until 90 s have passed. A query with `needs` passes
# once Prometheus answers it with success, empty or not.
qd=$TB_OUT/queries
mkdir -p $qd
jq -c -n '[inputs] | to_entries[] | .value + {id: .key}' "$queries" >$qd/all.jsonl
mapfile -t alerts_qs < <(jq -r 'select(.promql | contains("ALERTS")) | .promql' $qd/all.jsonl)
jq -c 'select(.promql | contains("ALERTS") | not)' $qd/all.jsonl >$qd/todo.jsonl
n=$(wc -l <$qd/all.jsonl)
start=$SECONDS round=0
while :; do
  round=$((round + 1))
  jq -r --arg p "$prom" --arg d "$qd" \
    '"url = \"\($p)/api/v1/query?query=\(.promql | @uri)\"\noutput = \"\($d)/r\(.id).json\""' \
    $qd/todo.jsonl >$qd/curl.cfg
  rm -f $qd/r*.json
  curl -s --max-time 60 -K $qd/curl.cfg
  # The ids whose result is empty (or missing: a failed request); with
  # `needs`, only those not answered with success.
  bad=$(jq -n -c --slurpfile todo $qd/todo.jsonl --arg d "$qd" '
    [inputs | {id: (input_filename | ltrimstr("\($d)/r") | rtrimstr(".json") | tonumber), n: (.data.result | length), ok: (.status == "success")}] as $r
    | [$todo[] | . as $t | select(([$r[] | select(.id == $t.id and (.n > 0 or ($t.needs != null and .ok)))] | length) == 0) | .id]' $qd/r*.json 2>/dev/null) ||
    bad=$(jq -s -c 'map(.id)' $qd/todo.jsonl)
  jq -r --argjson bad "$bad" 'select(.id as $i | $bad | index($i) | not)
    | "ok: \(.dashboard) / \(.panel) / \(.refId)\(if .needs then " (may be empty: needs \(.needs))" else "" end)"' $qd/todo.jsonl
  jq -c --argjson bad "$bad" 'select(.id as $i | $bad | index($i))' $qd/todo.jsonl >$qd/todo.next
  mv $qd/todo.next $qd/todo.jsonl
  [[ -s $qd/todo.jsonl ]] || break
  if ((SECONDS - start > 90)); then
    jq -r '"EMPTY: \(.dashboard) / \(.panel) / \(.refId): \(.promql)"' $qd/todo.jsonl
    fail "healthy: $(wc -l <$qd/todo.jsonl) of $n dashboard queries returned no series within 90 s"
  fi
  echo "round $round: $(wc -l <$qd/todo.jsonl) queries still empty, retrying"
  sleep 2
done
pass "healthy: every dashboard query returns at least one series, those with needs at least an answer ($(jq -s 'map(select(.needs)) | length' $qd/all.jsonl) of them; $((n - ${#alerts_qs[@]})) queries + the alerts tables later; $round rounds, t=$((SECONDS - t0))s)"
# Long enough for a 5s `for:` to have run out: a condition that held would fire.
((SECONDS - up_at >= 20)) || sleep $((20 - (SECONDS - up_at)))
alerts || fail "ALERTS query"
[[ -z $FIRING ]] || { diag; fail "healthy: firing [$FIRING]"; }
# Nothing pending either, but for the two informational alerts: the advisor
# may flip to queue-depth for a window when TCG jitter makes one path's EWMA
# 1.5x the other's, which is what their long `for:` absorbs.
for w in $PENDING; do
  [[ $w == PathwiseIopolicyMismatch:* || $w == PathwiseLatencyImbalance:* ]] ||
    { diag; fail "healthy: $w pending"; }
done
pass "healthy: nothing fires (t=$((SECONDS - t0))s); pending: [$PENDING]"

# 2. delay on path 0
tb_path_delay 0 30 || fail "delay"
wait_set "delay: PathwisePathDegraded for $p0 and PathwiseTargetPortDegraded for $addr0, nothing else" 90 \
  "PathwisePathDegraded:$p0 PathwiseTargetPortDegraded:$addr0"
hold "delay" 10 "PathwisePathDegraded:$p0 PathwiseTargetPortDegraded:$addr0"
# Both hosts, and the target port on their per-path alerts (what the
# Alertmanager inhibit example matches on).
c=$(q "ALERTS{alertname=\"PathwisePathDegraded\",alertstate=\"firing\",path=\"$p0\",address=\"$addr0\",nqn=\"$TB_NQN\"}" | jq length)
((c == 2)) || { diag; fail "delay: PathwisePathDegraded with nqn and address $addr0 on $c instances, not 2"; }
c=$(q "ALERTS{alertname=\"PathwiseTargetPortDegraded\",alertstate=\"firing\",address=\"$addr0\",nqn=\"$TB_NQN\"}" | jq length)
((c == 1)) || { diag; fail "delay: PathwiseTargetPortDegraded for $TB_NQN $addr0: $c series"; }
deg=$(q "nqn_address:pathwise_hosts_degraded:count{address=\"$addr0\"}" | jq -r '.[0].value[1]')
[[ $deg == 2 ]] || { diag; fail "delay: hosts degraded on $addr0: $deg, not 2"; }
[[ $PENDING != *PathwiseHostPathsDegraded* ]] || { diag; fail "delay: PathwiseHostPathsDegraded pending"; }
p99_0=$(q "nqn_address:pathwise_path_io_latency_seconds:p99_rate5m{address=\"$addr0\"}" | jq -r '.[0].value[1]')
p99_1=$(q "nqn_address:pathwise_path_io_latency_seconds:p99_rate5m{address=\"$addr1\"}" | jq -r '.[0].value[1]')
awk -v a="$p99_0" -v b="$p99_1" 'BEGIN { exit !(a >= 0.03 && a > b) }' ||
  { diag; fail "delay: fleet p99 to $addr0 $p99_0 s, to $addr1 $p99_1 s (want the first >= 0.03 and above the second)"; }
pass "delay: target side: PathwiseTargetPortDegraded for $addr0 (2 of 2 hosts), PathwisePathDegraded on both hosts with its port, PathwiseHostPathsDegraded neither firing nor pending; fleet p99 $p99_0 s to $addr0, $p99_1 s to $addr1"
# A failed scrape (a loaded guest) resets a pending alert until the next
# evaluation: poll until both are pending, up to 20 s.
pending_both() {
  alerts && [[ " $PENDING " == *" PathwiseLatencyImbalance:$head "* && " $PENDING " == *" PathwiseIopolicyMismatch:$subsys "* ]]
}
start=$SECONDS
until pending_both; do
  ((SECONDS - start < 20)) || { diag; fail "delay: PathwiseLatencyImbalance for $head or PathwiseIopolicyMismatch for $subsys not pending (pending: [$PENDING])"; }
  sleep 1
done
pass "delay: PathwiseLatencyImbalance ($head) and PathwiseIopolicyMismatch ($subsys) pending, held back by their shipped for: (pending: [$PENDING])"
((${#alerts_qs[@]} >= 2)) || fail "dashboard alerts tables: ${#alerts_qs[@]}, expected the overview's and the fleet's"
for aq in "${alerts_qs[@]}"; do
  c=$(q "$aq" | jq length)
  ((c >= 1)) || fail "dashboard alerts table empty while alerts fire: $aq"
  pass "dashboard alerts table: $c series ($aq)"
done

# 3. ANA inaccessible on path 0
tb_path_ana 0 inaccessible || fail "ana"
wait_set "inaccessible: PathwisePathFailed for $p0, PathwiseSinglePathLeft for $p1, PathwiseTargetPortDegraded for $addr0" 90 \
  "PathwisePathFailed:$p0 PathwiseSinglePathLeft:$p1 PathwiseTargetPortDegraded:$addr0" "PathwisePathFailovers:$p0"

# 4. recovery
tb_path_clear 0 || fail "clear"
tb_path_ana 0 optimized || fail "ana back"
wait_set "recovered: no alert fires" 200 ""
pass "failed scrapes over the whole run: $(failed_scrapes) (t=$((SECONDS - t0))s)"
# What each rule group costs this guest's Prometheus (the fleet group's joins
# against the per-node ones), from its own /metrics, for the log.
curl -sf --max-time 10 "$prom/metrics" >"$TB_OUT/prometheus-metrics.txt" &&
  echo "rule groups, last evaluation seconds: $(sed -nE 's/^prometheus_rule_group_last_duration_seconds\{rule_group=".*;([^"]*)"\} (.*)/\1=\2/p' "$TB_OUT/prometheus-metrics.txt" | tr '\n' ' ')"
kill $fio_pid 2>/dev/null
kill -0 $pw_pid && kill -0 $pw2_pid || fail "an agent exited during the run"
curl -sf "$prom/api/v1/rules" >"$TB_OUT/rules.json" || true
