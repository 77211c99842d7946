# SPDX-License-Identifier: Apache-2.0
# Controller probes, tcp:2, with no I/O at all (--bpf=off: nothing but the
# probes touches the paths), one boot:
#  - path 0 +30 ms (netem): its controller's probe latency shows the delay,
#    path 1's does not; both paths are scored (an EWMA; path 0 degraded at
#    ~4x path 1's latency, path 1 healthy, neither idle) and path 0 gets
#    the lower read weight;
#  - path 0's link down: its probes fail (a timeout, then the kernel's
#    errors) and path 0 is failed with weight 0 within 3 s, before the
#    kernel notices;
#  - link up (the delay cleared before the link went down): the kernel
#    reconnects, probes succeed, path 0 usable and then healthy again;
#  - path 1's controller deleted while it is being probed (nvme
#    disconnect): a log line, its series go, no crash; reconnected, it is
#    probed again.
# --probe-interval=500ms --probe-timeout=1s: detection takes up to
# probe_interval + probe_timeout + one collection interval (2.5 s here; 4 s
# with the defaults, 1 s and 2 s).
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/assert.sh"
pw=$1
url=http://127.0.0.1:9877
p0=${TB_PATHS[0]} p1=${TB_PATHS[1]} c0=${TB_CTRLS[0]} c1=${TB_CTRLS[1]}
prom=/tmp/probes.prom

tb_path_delay 0 30 || fail "tb_path_delay"
"$pw" serve --web.listen-address=127.0.0.1:9877 --interval=1s --bpf=off \
  --probe-interval=500ms --probe-timeout=1s >"$TB_OUT/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
if ! tb_wait 30 curl -sf -o /dev/null "$url/healthz"; then
  cat "$TB_OUT/serve.log" >&2
  fail "pathwise serve: no /healthz 200 within 30 s"
fi
grep -q "controller probes every 500ms, timeout 1s" "$TB_OUT/serve.log" ||
  { cat "$TB_OUT/serve.log" >&2; fail "no 'controller probes every' log line"; }
pass "agent up, probes on"

# state: H0 H1 (health), W0 W1 (read weight), E0 E1 (read EWMA, s) of
# paths 0 and 1 from /api/v1/topology, read over bash's /dev/tcp and parsed
# in bash: no process per poll (a fork and exec cost up to a second in the
# TCG guest, which would blur the timings). nlohmann's dump(2) puts one key
# per line, sorted: health < latency_ewma_seconds < name < weight.
state() {
  local line block= h= e= name= status= fd
  exec {fd}<>"/dev/tcp/127.0.0.1/9877" || fail "connect to pathwise"
  printf 'GET /api/v1/topology HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&"$fd"
  H0=- H1=- W0=-1 W1=-1 E0=- E1=-
  while IFS= read -r -t 5 line <&"$fd"; do
    [[ -n $status ]] || status=$line
    case $line in
      *'"health": "'*) line=${line#*: \"}; h=${line%%\"*} ;;
      *'"latency_ewma_seconds": {'*) block=ewma ;;
      *'"weight": {'*) block=weight ;;
      *'}'*) block= ;;
      *'"name": "'*) line=${line#*: \"}; name=${line%%\"*} ;;
      *'"read": '*)
        line=${line#*: }
        line=${line%,}
        if [[ $block == ewma ]]; then
          e=$line
        elif [[ $block == weight && $name == "$p0" ]]; then
          W0=$line H0=$h E0=$e
        elif [[ $block == weight && $name == "$p1" ]]; then
          W1=$line H1=$h E1=$e
        fi
        ;;
    esac
  done
  exec {fd}<&-
  [[ $status == *" 200 "* ]] || fail "GET /api/v1/topology: '$status'"
}

# since T: seconds from T (an EPOCHREALTIME) to now, two decimals, no fork.
since() {
  local a=${1/./} b=${EPOCHREALTIME/./} d
  d=$(((b - a) / 10000))
  printf -v SINCE '%d.%02d' $((d / 100)) $((d % 100))
}

# within PHASE SECONDS CONDITION: polls until CONDITION holds in a response
# that arrived at most SECONDS after T0 (set when the fault helper
# returned); the state it shows held by then.
within() {
  local phase=$1 limit=$2 cond=$3
  while :; do
    state
    since "$T0"
    echo "$phase +${SINCE}s path0 $H0 w=$W0 ewma=$E0 | path1 $H1 w=$W1 ewma=$E1"
    if ((10#${SINCE/./} > limit * 100)); then
      fail "$phase: '$cond' not met within ${limit}s"
    fi
    if eval "$cond"; then
      pass "$phase: '$cond' at +${SINCE}s (limit ${limit}s)"
      return 0
    fi
    sleep 0.2
  done
}

fault() { # NAME CMD...: runs CMD, then starts the clock
  local name=$1 start=$EPOCHREALTIME
  shift
  "$@" || fail "$name"
  T0=$EPOCHREALTIME
  since "$start"
  echo "$name: '$*' took ${SINCE} s"
}

# Idle, path 0 delayed: probe latency per controller, scoring from probes.
sleep 5
scrape "$url/metrics" "$prom.a" || fail "scrape"
sleep 4
scrape "$url/metrics" "$prom.b" || fail "scrape"
cp "$prom.a" "$TB_OUT/idle-a.prom"
cp "$prom.b" "$TB_OUT/idle-b.prom"
mean_ms() { # CONTROLLER: mean probe latency between the two scrapes, ms
  local n s
  n=$(($(prom_values "$prom.b" pathwise_controller_probe_latency_seconds_count controller="$1") -
    $(prom_values "$prom.a" pathwise_controller_probe_latency_seconds_count controller="$1")))
  s=$(awk -v a="$(prom_values "$prom.a" pathwise_controller_probe_latency_seconds_sum controller="$1")" \
    -v b="$(prom_values "$prom.b" pathwise_controller_probe_latency_seconds_sum controller="$1")" \
    'BEGIN { printf "%.6f", b - a }')
  ((n >= 5)) || fail "controller $1: $n probes in 4 s"
  awk -v s="$s" -v n="$n" 'BEGIN { printf "%.2f", 1000 * s / n }'
}
m0=$(mean_ms "$c0")
m1=$(mean_ms "$c1")
echo "idle: mean probe latency $c0 (path 0, +30 ms) ${m0} ms, $c1 (path 1) ${m1} ms"
awk -v m="$m0" 'BEGIN { exit !(m >= 30) }' || fail "path 0's probes do not show the +30 ms: ${m0} ms"
awk -v m="$m1" 'BEGIN { exit !(m < 15) }' || fail "path 1's probes are slow: ${m1} ms"
pass "probe latency: path 0 ${m0} ms >= 30, path 1 ${m1} ms < 15"
expect_eq "probe failures while idle" \
  "$(prom_values "$prom.b" pathwise_controller_probe_failures_total | awk '{ s += $1 } END { print s + 0 }')" 0
expect_eq "path I/O completed while idle (sysfs)" \
  "$(($(prom_values "$prom.b" pathwise_path_io_completed_total | awk '{ s += $1 } END { print s + 0 }') -
    $(prom_values "$prom.a" pathwise_path_io_completed_total | awk '{ s += $1 } END { print s + 0 }')))" 0
T0=$EPOCHREALTIME
# Both scored from probes alone: path 0 at 3x path 1's EWMA is degraded
# (as it would be from I/O), path 1 healthy; neither idle.
within idle 5 '[[ $H0 == degraded && $H1 == healthy && $E0 != null && $E1 != null ]] && ((W0 < W1))'

# The delay goes; link down on path 0 while its EWMA still decays.
tb_path_clear 0 || fail "tb_path_clear"

# Link down on path 0: probes time out, the path fails.
fault down tb_path_down 0
within down 3 '[[ $H0 == failed ]] && ((W0 == 0 && W1 == 64))'
scrape "$url/metrics" "$prom" || fail "scrape"
cp "$prom" "$TB_OUT/down.prom"
grep "^pathwise_controller_probe_failures_total{controller=\"$c0\"" "$prom" | grep -v ' 0$'
grep "^pathwise_controller_state{controller=\"$c0\"" "$prom" | grep ' 1$'
# One outstanding command, not a queue: at 500 ms intervals a prober that
# kept sending would have timed out two or more by now; the kernel has not
# noticed the link yet (keep-alive), so the first one is still outstanding.
expect_eq "$c0 probe timeouts (one outstanding probe, no new ones behind it)" \
  "$(prom_values "$prom" pathwise_controller_probe_failures_total controller="$c0" reason=timeout)" 1
grep -q "probe $c0 failed: no completion within 1s" "$TB_OUT/serve.log" || fail "no timeout log line"
pass "timeout log line: $(grep -m1 "probe $c0 failed" "$TB_OUT/serve.log" | cut -c1-160)"

# Link up: the kernel reconnects; probes succeed again; path 0 recovers:
# usable at once, healthy after recover_windows clean windows (and its
# EWMA's decay from the +30 ms under 3x path 1's).
# 75 s: the probe left outstanding while the link was down usually
# completes ~1 s after it is up (TCP retransmits it). But when the
# target's keep-alive (5 s) expires first, it drops the controller
# ("nvmet: ctrl fatal error"), and in one run under load the kernel then
# completed nothing for 30 s: presumably not until the probe's own admin
# timeout (60 s), then a reconnect (1 s). The prober sends no new probe
# until the kernel completes the old one.
fault up tb_path_up 0
within up 75 '[[ $H0 != failed ]] && ((W0 > 0))'
# 45 s after that: the EWMA follows probes by the plain 1/8 step (one or
# two probes a window never make a step), 8 to 20 s here before
# recover_windows.
within up 120 '[[ $H0 == healthy && $H1 == healthy ]] && ((W0 > 0))'
grep -q "probe $c0 recovered" "$TB_OUT/serve.log" || fail "no recovery log line"
pass "recovery log line"

# Path 1's controller deleted under the prober, then connected again.
fault disconnect tb_ctrl_disconnect 1
sleep 2.5
kill -0 "$pid" 2>/dev/null || fail "pathwise died when $c1 was deleted"
scrape "$url/metrics" "$prom" || fail "scrape"
expect_eq "$c1 probe series after its deletion" \
  "$(prom_count "$prom" pathwise_controller_probe_failures_total controller="$c1")" 0
fault reconnect tb_ctrl_reconnect 1
tb_refresh
c1=${TB_CTRLS[1]}
echo "path 1's controller after reconnect: $c1"
T0=$EPOCHREALTIME
while :; do
  scrape "$url/metrics" "$prom" || fail "scrape"
  n=$(prom_values "$prom" pathwise_controller_probe_latency_seconds_count controller="$c1")
  [[ -n $n && $n -ge 1 ]] && break
  since "$T0"
  ((10#${SINCE/./} > 1000)) && fail "$c1 not probed within 10 s of reconnect"
  sleep 0.5
done
since "$T0"
pass "$c1 probed again after reconnect ($n probes at +${SINCE}s)"
grep "probe " "$TB_OUT/serve.log" | cut -c1-200

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
trap - EXIT
expect_eq "pathwise serve exit status on SIGTERM" "$rc" 0
