# SPDX-License-Identifier: Apache-2.0
# Soak, tcp:2: `pathwise serve --bpf=required --interval=1s
# --metrics.profile=full` with fio on the
# head (round-robin, 4k randread QD8 at 150 IOPS) while path faults cycle,
# one at a time, each held 10-20 s (seeded random), on alternating paths:
# netem delay 30 ms +-10, netem loss 10 %, link down/up, ANA inaccessible,
# ANA non-optimized, controller disconnect/reconnect. After each fault is
# cleared the topology is whole again (every controller live, every path
# optimized) before the next one; every kind once per round of six, in a
# shuffled order. /metrics is scraped every second.
#
# Start = the end of the warm-up (every HTTP worker has served a scrape, then
# --warmup seconds at 1 scrape/s, in which every worker also renders
# /metrics once; faults not yet begun); end = after the
# last fault is cleared and the agent has settled; mid = halfway through the
# faults. RSS is the median of 5 samples at each. A leak grows RSS in both
# halves of the faults; what is left of warm-up (workers that render
# /metrics for the first time, glibc's per-thread caches filling) grows it
# in the first and levels off. Fails when:
#  - RSS grows more than 2.5 % of the start from mid to end: the rate of a
#    leak that would make 5 % over the whole run (8 KiB leaked per scrape
#    fails this in 3 minutes of a TCG guest);
#  - RSS at the end is more than 10 % above the start (bounded growth, but
#    too much of it);
#  - the series count does not return to its start value (60 s allowed);
#  - a counter goes backwards: a *_total, or histogram *_count or *_sum, sample
#    lower than in the previous successful scrape that had the same label
#    set. A series absent from one or more successful scrapes (its path or
#    controller was gone) may come back lower: Prometheus sees a new series
#    after staleness, so that is a restart, counted and reported, not a
#    failure;
#  - a collector is failed (pathwise_collector_success 0) at the end;
#  - fio saw an I/O error, or the agent does not exit 0 on SIGTERM.
# Writes soak-report.txt (and the per-scrape log) to $TB_OUT.
# Args: PATHWISE_BINARY [--minutes N] (of faults, default 3)
#       [--warmup S] (default 40) [--seed N] (default random, reported)
. "$TB_SCRIPT_DIR/assert.sh"
pw=$1
shift
minutes=3 warmup=40 seed=$((RANDOM % 10000))
while (($#)); do
  case $1 in
    --minutes) minutes=$2; shift ;;
    --minutes=*) minutes=${1#*=} ;;
    --warmup) warmup=$2; shift ;;
    --warmup=*) warmup=${1#*=} ;;
    --seed) seed=$2; shift ;;
    --seed=*) seed=${1#*=} ;;
    *) fail "usage: soak.sh PATHWISE [--minutes N] [--warmup S] [--seed N] (got '$1')" ;;
  esac
  shift
done
[[ $minutes =~ ^[0-9]+$ && $warmup =~ ^[0-9]+$ && $seed =~ ^[0-9]+$ ]] ||
  fail "--minutes, --warmup and --seed take whole numbers"
RANDOM=$seed
url=http://127.0.0.1:9877
d=/tmp/soak
mkdir -p $d
report=$TB_OUT/soak-report.txt
pids=()
trap 'touch $d/stop; kill "${pids[@]}" 2>/dev/null' EXIT

# Clock reads without a fork (forks are dear in a TCG guest that also runs
# fio and the target): NOW in ms since the epoch.
now() { NOW=$((${EPOCHREALTIME/./} / 1000)); }
say() { echo "$*" | tee -a "$report"; }
# wait_s SECONDS CMD...: polls CMD every 0.5 s until it succeeds, by the clock
# (tb_wait counts polls, and a poll costs a second or more here).
wait_s() {
  local end
  now
  end=$((NOW + $1 * 1000))
  shift
  until "$@"; do
    now
    ((NOW < end)) || return 1
    sleep 0.5
  done
}

# proc_stats PID: RSS (KiB), threads and open fds of PID into RSS THR FDS,
# with no fork.
proc_stats() {
  local k v _ fds
  RSS=0 THR=0
  while read -r k v _; do
    case $k in
      VmRSS:) RSS=$v ;;
      Threads:) THR=$v ;;
    esac
  done <"/proc/$1/status"
  fds=("/proc/$1/fd"/*)
  FDS=${#fds[@]}
}

# The per-scrape extraction: prints "series failed_collectors" and appends
# "SEQ<TAB>label set<TAB>value" for every counter sample to counters.log.
cat >$d/extract.awk <<'AWK'
/^#/ || NF < 2 { next }
{
  series++
  key = $0
  sub(/ [^ ]*$/, "", key)
  name = key
  sub(/\{.*/, "", name)
  if (name ~ /_(total|count|sum)$/) print seq "\t" key "\t" $NF >>out
  if (name == "pathwise_collector_success" && $NF != 1) failed = failed key ";"
}
END { print series + 0, (failed == "" ? "-" : failed) }
AWK

# scraper: every second, /metrics to cur.prom; one line per scrape in
# scrapes.log: "n t_ms http_code seconds series rss_kib threads fds
# failed_collectors"; counter samples of successful scrapes (numbered by
# seq) in counters.log.
scraper() {
  local n=0 seq=0 start next code secs series failed
  now
  start=$NOW next=$NOW
  while [[ ! -e $d/stop ]]; do
    n=$((n + 1))
    read -r code secs < <(curl -s --max-time 5 -o $d/cur.prom -w '%{http_code} %{time_total}\n' "$url/metrics" ||
      echo "000 -")
    series=- failed=-
    if [[ $code == 200 ]]; then
      seq=$((seq + 1))
      read -r series failed < <(awk -v seq=$seq -v out=$d/counters.log -f $d/extract.awk $d/cur.prom)
      cp $d/cur.prom $d/last.prom
    fi
    proc_stats "$agent"
    now
    echo "$n $((NOW - start)) $code $secs $series $RSS $THR $FDS $failed" >>$d/scrapes.log
    next=$((next + 1000))
    ((next > NOW)) || next=$NOW
    sleep "$(((next - NOW) / 1000)).$(printf %03d $(((next - NOW) % 1000)))"
  done
}

# last_scrapes K: the last K lines of scrapes.log with a successful scrape.
last_scrapes() { awk '$3 == 200' $d/scrapes.log | tail -n "$1"; }
# median_col COL LINES: the median of column COL.
median_col() { awk -v c="$1" '{ print $c }' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# window: "rss threads fds series scrape_ms" medians over the last 5 scrapes.
window() {
  local lines
  lines=$(last_scrapes 5)
  echo "$(median_col 6 <<<"$lines") $(median_col 7 <<<"$lines") $(median_col 8 <<<"$lines")" \
    "$(median_col 5 <<<"$lines") $(median_col 4 <<<"$lines" | awk '{ printf "%.1f", $1 * 1000 }')"
}

# warm_workers: every handler thread of the HTTP server serves /metrics at
# least once before the start sample: 160 connections, each from its own
# loopback address, are opened first, then each sends its request, so the
# requests arrive together and every handler thread takes some. What a
# thread touches when it first serves (its stack pages, glibc's
# per-thread cache of freed blocks) stays with it: that is warm-up, not
# growth. (The former thread-per-connection server had 32 workers to
# warm; the current one has 4 handler and 2 event threads.)
warm_workers() {
  python3 - "$1" <<'PY'
import socket, sys
port = int(sys.argv[1])
conns = []
for i in range(160):
    try:
        c = socket.socket()
        c.settimeout(10)
        c.bind(("127.0.1.%d" % (i + 1), 0))
        c.connect(("127.0.0.1", port))
        conns.append(c)
    except OSError:
        pass
for c in conns:
    try:
        c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    except OSError:
        pass
ok = 0
for c in conns:
    data = b""
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    ok += data.startswith(b"HTTP/1.1 200")
    c.close()
print(ok)
PY
}

# whole: every controller live, every path optimized.
whole() {
  local i
  _tb_all_ready || return 1
  for ((i = 0; i < ${#TB_PATHS[@]}; i++)); do
    [[ $(cat "/sys/block/${TB_PATHS[i]}/ana_state" 2>/dev/null) == optimized ]] || return 1
  done
}

# fault_on KIND I / fault_off KIND I: one fault on path I, and its undoing
# (which waits until the topology is whole again).
fault_on() {
  case $1 in
    delay) tb_path_delay "$2" 30 10 ;;
    loss) tb_path_loss "$2" 10 ;;
    link) tb_path_down "$2" ;;
    ana-inaccessible) tb_path_ana "$2" inaccessible ;;
    ana-non-optimized) tb_path_ana "$2" non-optimized ;;
    disconnect) tb_ctrl_disconnect "$2" ;;
  esac
}
fault_off() {
  case $1 in
    delay | loss) tb_path_clear "$2" ;;
    link) tb_path_up "$2" ;;
    ana-*) tb_path_ana "$2" optimized ;;
    disconnect) tb_ctrl_reconnect "$2" ;;
  esac || return 1
  wait_s 90 whole
}

: >"$report"
tb_iopolicy round-robin || fail "iopolicy"
# The full metrics profile: it renders every family, and a series that is
# zero is exported from the first scrape. The default profile leaves a
# counter out until it moves, so an error counter born mid-run would stay
# and the series count could never return to its start.
"$pw" serve --web.listen-address=127.0.0.1:9877 --interval=1s --bpf=required \
  --metrics.profile=full >"$TB_OUT/serve.log" 2>&1 &
agent=$!
pids+=("$agent")
tb_wait 60 eval 'scrape "$url/metrics" $d/first.prom && grep -q "^pathwise_path_io_completed_total" $d/first.prom' ||
  fail "agent: no per-path /metrics within 60 s: $(cat "$TB_OUT/serve.log")"
tb_fio --runtime=$((warmup + minutes * 60 + 1800)) --iodepth=8 --rate_iops=150 \
  --output-format=json --output="$TB_OUT/fio.json" >/dev/null 2>"$TB_OUT/fio.err" &
fio_pid=$!
pids+=("$fio_pid")
scraper &
scraper_pid=$!
pids+=("$scraper_pid")
now
t_begin=$NOW
say "pathwise soak: kernel $TB_KERNEL, $TB_TOPOLOGY, ${minutes} min of faults after ${warmup} s of warm-up, seed $seed"
say "fio: 4k randread QD8 150 IOPS on $TB_HEAD, round-robin; /metrics scraped every 1 s; agent --interval=1s --bpf=required"

n=$(warm_workers 9877) || fail "warming the HTTP workers"
((n == 160)) || fail "warming the HTTP workers: $n of 160 concurrent /metrics answered 200"
say "warm-up: $n concurrent /metrics requests (every HTTP worker once), then ${warmup} s"
sleep "$warmup"
read -r rss0 thr0 fds0 series0 ms0 < <(window)
cp $d/last.prom "$TB_OUT/start.prom"
pass "start: rss ${rss0} KiB, threads $thr0, fds $fds0, series $series0, scrape ${ms0} ms"

now
end_faults=$((NOW + minutes * 60 * 1000))
mid_faults=$((NOW + minutes * 30 * 1000))
rss_mid=
kinds=(delay loss link ana-inaccessible ana-non-optimized disconnect)
nfaults=0
declare -A by_kind
while now && ((NOW < end_faults)); do
  if ((nfaults % ${#kinds[@]} == 0)); then # a new round: every kind once, shuffled
    for ((j = ${#kinds[@]} - 1; j > 0; j--)); do
      r=$((RANDOM % (j + 1)))
      t=${kinds[j]} kinds[j]=${kinds[r]} kinds[r]=$t
    done
  fi
  if [[ -z $rss_mid ]] && now && ((NOW >= mid_faults)); then
    read -r rss_mid _ < <(window)
  fi
  kind=${kinds[nfaults % ${#kinds[@]}]}
  i=$((nfaults % 2))
  hold=$((10 + RANDOM % 11))
  now
  t_on=$NOW
  fault_on "$kind" "$i" || fail "fault $kind on path $i"
  now
  sleep $((hold - (NOW - t_on) / 1000 > 0 ? hold - (NOW - t_on) / 1000 : 0))
  now
  t_off=$NOW
  fault_off "$kind" "$i" || fail "undoing $kind on path $i: topology not whole within 90 s"
  now
  nfaults=$((nfaults + 1))
  by_kind[$kind]=$((${by_kind[$kind]:-0} + 1))
  printf 'fault %d at +%ds: %s on path %d, held %d s, whole again %d ms after undoing\n' \
    "$nfaults" $(((t_on - t_begin) / 1000)) "$kind" "$i" $(((t_off - t_on) / 1000)) $((NOW - t_off)) |
    tee -a "$TB_OUT/faults.log"
done
kinds_done=$(for k in "${!by_kind[@]}"; do echo "$k ${by_kind[$k]}"; done | sort | tr '\n' ',' | sed 's/,$//; s/,/, /g')
say "faults: $nfaults ($kinds_done), each held 10-20 s, one at a time, paths alternating"

# Settle: the series count back to its start value, every collector up.
settled() {
  local l
  l=$(last_scrapes 1)
  [[ $(awk '{ print $5 }' <<<"$l") == "$series0" && $(awk '{ print $9 }' <<<"$l") == - ]]
}
now
t_settle=$NOW
wait_s 60 settled
now
sleep 5 # five more scrapes for the end window
read -r rss1 thr1 fds1 series1 ms1 < <(window)
last=$(last_scrapes 1)
failed1=$(awk '{ print $9 }' <<<"$last")
cp $d/last.prom "$TB_OUT/end.prom"
touch $d/stop
wait "$scraper_pid"
cp $d/scrapes.log "$TB_OUT/scrapes.log"

# fio: ran throughout, no I/O error.
fio_ok=1
kill -0 "$fio_pid" 2>/dev/null || fio_ok=0
# fio writes its JSON when it stops on SIGTERM; $fio_pid is the subshell
# running the tb_fio function, so the signal goes to its child, fio. A
# watchdog in case it does not stop.
kill -TERM $(cat "/proc/$fio_pid/task/$fio_pid/children" 2>/dev/null) 2>/dev/null
(sleep 30 && kill -KILL "$fio_pid") 2>/dev/null &
fio_watchdog=$!
wait "$fio_pid" 2>/dev/null
kill "$fio_watchdog" 2>/dev/null
sed -n '/^{/,$p' "$TB_OUT/fio.json" >$d/fio.json
read -r fio_err fio_ios < <(jq -r '[([.jobs[].error] | add), ([.jobs[].read.total_ios] | add)] | @tsv' $d/fio.json)

# Counters: backwards between successive successful scrapes, or restarts
# after an absence.
read -r ncounters nback nrestart < <(awk -F"\t" -v out="$d/backwards.txt" '
  {
    s = $1; k = $2; v = $3 + 0
    if (k in last) {
      if (v < last[k]) {
        if (seen[k] == s - 1) {
          back++
          if (back <= 20) printf "scrape %d: %s %s -> %s\n", s, k, last[k], $3 >>out
        } else {
          restart++
          if (restart <= 20) printf "restart after absence, scrape %d (last seen %d): %s %s -> %s\n", s, seen[k], k, last[k], $3 >>out
        }
      }
    } else {
      keys++
    }
    last[k] = v; seen[k] = s
  }
  END { print keys + 0, back + 0, restart + 0 }' $d/counters.log)
[[ -e $d/backwards.txt ]] && cp $d/backwards.txt "$TB_OUT/backwards.txt"

pctl() { # P: the P-th percentile of scrape seconds during the faults, in ms
  awk -v a=$(((end_faults - minutes * 60 * 1000 - t_begin))) -v b=$((end_faults - t_begin)) \
    '$3 == 200 && $2 >= a && $2 <= b { print $4 * 1000 }' $d/scrapes.log | sort -g |
    awk -v p="$1" '{ v[NR] = $1 } END { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; printf "%.1f", v[i] }'
}
nscrapes=$(wc -l <$d/scrapes.log)
nfailed=$(awk '$3 != 200' $d/scrapes.log | wc -l)
say ""
say "                      start      end"
say "$(printf 'RSS (KiB)        %10s %8s  (%+.1f %%; halfway through the faults %s, %+.1f %%; max %s)' "$rss0" "$rss1" \
  "$(awk -v a="$rss0" -v b="$rss1" 'BEGIN { print (b - a) * 100 / a }')" "${rss_mid:-?}" \
  "$(awk -v a="$rss0" -v b="${rss_mid:-$rss0}" 'BEGIN { print (b - a) * 100 / a }')" \
  "$(awk '{ if ($6 > m) m = $6 } END { print m }' $d/scrapes.log)")"
say "$(printf 'open fds         %10s %8s' "$fds0" "$fds1")"
say "$(printf 'threads          %10s %8s' "$thr0" "$thr1")"
say "$(printf 'series           %10s %8s' "$series0" "$series1")"
say "$(printf 'scrape (ms)      %10s %8s  (median of 5; during faults p50 %s, p99 %s, max %s)' \
  "$ms0" "$ms1" "$(pctl 50)" "$(pctl 99)" "$(pctl 100)")"
say "scrapes: $nscrapes, $nfailed failed (no 200 within 5 s)"
say "counters: $ncounters series checked, $nback went backwards, $nrestart restarted after being absent"
say "collectors failed at the end: ${failed1/-/none}"
say "HTTP connections refused: $(awk '/^pathwise_http_connections_refused_total\{/ { sub(/.*reason="/, ""); sub(/"\}/, ""); printf "%s %s, ", $1, $2 }' "$TB_OUT/end.prom" | sed 's/, $//')"
say "fio: $fio_ios reads, error $fio_err$([[ $fio_ok == 1 ]] || echo ", exited before the end")"

bad=()
[[ -n $rss_mid ]] || rss_mid=$rss0
awk -v a="$rss0" -v m="$rss_mid" -v b="$rss1" 'BEGIN { exit !(b - m > a * 0.025) }' &&
  bad+=("RSS grew more than 2.5 % in the second half of the faults ($rss_mid -> $rss1 KiB; start $rss0): growth that goes on")
awk -v a="$rss0" -v b="$rss1" 'BEGIN { exit !(b > a * 1.10) }' && bad+=("RSS grew more than 10 % ($rss0 -> $rss1 KiB)")
[[ $series1 == "$series0" ]] || {
  bad+=("series count $series1 at the end, $series0 at the start")
  diff <(sed -E '/^#/d; s/ [^ ]*$//' "$TB_OUT/start.prom" | sort) \
    <(sed -E '/^#/d; s/ [^ ]*$//' "$TB_OUT/end.prom" | sort) >"$TB_OUT/series.diff"
  head -20 "$TB_OUT/series.diff"
}
((nback == 0)) || {
  bad+=("$nback counter samples went backwards")
  cat $d/backwards.txt
}
[[ $failed1 == - ]] || bad+=("collectors failed at the end: $failed1")
[[ $fio_ok == 1 && $fio_err == 0 ]] || bad+=("fio: error $fio_err, ran to the end: $fio_ok: $(cat "$TB_OUT/fio.err")")
[[ -s $TB_OUT/fio.err ]] && grep -qi error "$TB_OUT/fio.err" && bad+=("fio: $(cat "$TB_OUT/fio.err")")

kill -TERM "$agent"
rc=0
wait "$agent" || rc=$?
((rc == 0)) || bad+=("agent exited $rc on SIGTERM")
trap - EXIT
if ((${#bad[@]})); then
  say "result: FAIL"
  for b in "${bad[@]}"; do say "  - $b"; done
  exit 1
fi
say "result: PASS"
