# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Guest half of bench/datapath_vs_kernel.sh (a testbed case script, run by
# `testbed run`): one scenario, one side, every policy of that side in this
# one boot. Writes one line per policy to $TB_OUT/rows.txt:
#   side scenario policy iops mib_s clat_mean_us clat_p99_us cpu_us_per_io \
#   server_usr_us_per_io server_sys_us_per_io ios wire_bytes_per_io
# (cpu_us_per_io: the guest's busy CPU time over the run per I/O; server_*:
# the datapath process's, "-" for the kernel; wire_bytes_per_io: what the
# target's ends of both links sent per I/O, frames with their headers, as
# netem's rate counts them) and fio's JSON per policy.
#
# Args: SIDE SCENARIOS RUNTIME NUMJOBS IODEPTH PATHWISE PERF VARIANTS
#       BASE_DELAY_MS VARIANT_SCENARIOS CB_RATES ROUNDS READ_PCT
#       [DATAPATH_ARGS...]
#   READ_PCT: 100, random reads; below, random reads and writes with that
#     share of reads (fio --rwmixread); a row then counts both.
#   SIDE: kernel (needs --multipath on) | datapath (--multipath off)
#   SCENARIOS: comma-separated: symmetric, delay30, lossy, down, and the
#     latency-bound pair lb-symmetric (netem BASE_DELAY_MS on both paths)
#     and lb-delay30 (the same, plus 30 ms on path 0); cb-asym, a
#     capacity-bound pair: the read data of path 0 and path 1 limited to
#     CB_RATES ("R0,R1" Mbit/s, netem rate on the target's end)
# ROUNDS > 1 (kernel side): round-robin and queue-depth again on every
# scenario, ROUNDS - 1 more times, after the main rows (rows POLICY/rN):
# the kernel's spread between rounds, beside the datapath's (its rounds are
# VARIANTS of the same binary named rN, which run every datapath policy).
# PERF 1 (datapath side): one more pathwise run under
# `perf record -a -g`, its report in $TB_OUT/perf-*.txt.
# VARIANTS (datapath side; "" for none): "NAME|BINARY|ARGS;..." more datapath builds or
# flags, each run on VARIANT_SCENARIOS (comma-separated, e.g.
# symmetric,delay30) under round-robin and pathwise in the same boot, rows
# labelled POLICY/NAME (before/after comparisons). A variant whose ARGS
# include --web.listen-address ADDR:PORT has its selector's per-path state
# sampled over each run into $TB_OUT/metrics-SCENARIO-LABEL.txt.
set -u
side=$1 scenarios=$2 runtime=$3 numjobs=$4 iodepth=$5 bin=$6 perf=$7 variant_list=$8
base_delay=$9 variant_scenarios=${10} cb_rates=${11} rounds=${12} read_pct=${13}
shift 13
dp_args=("$@")
rows=$TB_OUT/rows.txt
: >"$rows"

die() {
  echo "datapath_vs_kernel: $*" >&2
  exit 1
}

case $side in
  kernel)
    [[ $TB_MULTIPATH == on ]] || die "the kernel side needs --multipath on"
    policies=(numa round-robin queue-depth)
    ;;
  datapath)
    [[ $TB_MULTIPATH == off ]] || die "the datapath side needs --multipath off"
    [[ -x $bin ]] || die "no pathwise binary at $bin"
    modprobe ublk_drv 2>/dev/null
    [[ -e /dev/ublk-control ]] || die "ublk_drv is not available in this kernel ($(uname -r))"
    policies=(round-robin queue-depth pathwise)
    ;;
  *) die "side '$side': want kernel or datapath" ;;
esac
command -v fio >/dev/null || die "fio is not installed"

# The scenario's faults during one fio run (in the background; the caller
# waits for fio, then for this).
faults() {
  case $scenario in
    symmetric | delay30 | lb-symmetric | lb-delay30 | cb-asym) ;;
    lossy) # the lab's loss schedule (5 % / 0 / 3 % / 0), each a quarter of the run
      local q
      q=$(awk -v r="$runtime" 'BEGIN { printf "%.2f", r / 4 }')
      tb_path_loss 0 5
      sleep "$q"
      tb_path_clear 0
      sleep "$q"
      tb_path_loss 0 3
      sleep "$q"
      tb_path_clear 0
      ;;
    down) # path 0's link down from 1/4 of the run to 3/5 of it
      sleep "$(awk -v r="$runtime" 'BEGIN { printf "%.2f", r / 4 }')"
      tb_path_down 0
      sleep "$(awk -v r="$runtime" 'BEGIN { printf "%.2f", r * 0.35 }')"
      tb_path_up 0
      ;;
    *) die "scenario '$scenario': want symmetric, delay30, lossy, down, lb-symmetric, lb-delay30 or cb-asym" ;;
  esac
}

# After a run: every path's controller live again, no netem left.
settle() {
  tb_path_clear 0
  tb_path_clear 1
  tb_path_up 0
  local c
  for c in "${TB_CTRLS[@]}"; do
    tb_wait 60 eval "[[ \$(cat /sys/class/nvme/$c/state 2>/dev/null) == live ]]" ||
      die "controller $c not live again after the $scenario run"
  done
  tb_refresh 2>/dev/null
}

wire_bytes() { # bytes sent by the target's ends of both links
  local i n=0 b
  for i in 0 1; do
    b=$(ip -n tgt -j -s link show dev "tbt$i" | jq '.[0].stats64.tx.bytes')
    [[ $b =~ ^[0-9]+$ ]] || die "no transmitted byte count for tbt$i in netns tgt ('$b')"
    n=$((n + b))
  done
  echo "$n"
}
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
proc_ticks() { # pid: "utime stime" of every thread of pid, summed
  awk '{ u += $14; s += $15 } END { print u + 0, s + 0 }' /proc/"$1"/task/*/stat 2>/dev/null
}

# run_fio policy device [server pid]: one fio run with the scenario's faults.
run_fio() {
  local policy=$1 dev=$2 spid=${3:-} json=$TB_OUT/fio-$side-$scenario-${1//\//-}.json
  local b0 b1 su0=0 ss0=0 su1=0 ss1=0 fpid hz
  hz=$(getconf CLK_TCK)
  case $scenario in
    delay30) tb_path_delay 0 30 ;;
    # Both paths a round trip of BASE_DELAY_MS more (netem on the host side
    # of each link), so that the guest waits on the paths, not its CPU.
    lb-symmetric) tb_path_delay 0 "$base_delay" && tb_path_delay 1 "$base_delay" ;;
    lb-delay30) tb_path_delay 0 $((base_delay + 30)) && tb_path_delay 1 "$base_delay" ;;
    cb-asym) tb_path_rate 0 "${cb_rates%,*}" && tb_path_rate 1 "${cb_rates#*,}" ;;
  esac
  local w0 w1
  w0=$(wire_bytes)
  b0=$(busy_ticks)
  [[ -n $spid ]] && read -r su0 ss0 < <(proc_ticks "$spid")
  faults &
  fpid=$!
  local rw=(--rw=randread)
  ((read_pct < 100)) && rw=(--rw=randrw --rwmixread="$read_pct")
  fio --name=bench --filename="$dev" --eta=never --direct=1 --ioengine=io_uring \
    "${rw[@]}" --bs=4k --numjobs="$numjobs" --iodepth="$iodepth" --group_reporting \
    --time_based --runtime="$runtime" --norandommap --randrepeat=0 \
    --output-format=json --output="$json"
  local rc=$?
  wait "$fpid"
  b1=$(busy_ticks)
  w1=$(wire_bytes)
  [[ -n $spid ]] && read -r su1 ss1 < <(proc_ticks "$spid")
  settle
  ((rc == 0)) || die "fio failed ($rc) on $dev under $policy"
  local line
  # Reads and writes together: IOPS and bandwidth summed, the mean
  # latency weighted by I/Os, the p99 the larger op's (reads only: the
  # reads').
  line=$(jq -r '.jobs[0] | .read as $r | .write as $w | ($r.total_ios + $w.total_ios) as $n
    | (if $w.total_ios > $r.total_ios then $w else $r end) as $m
    | "\(.error) \($r.iops + $w.iops) \($r.bw + $w.bw) \(if $n > 0 then ($r.clat_ns.mean * $r.total_ios + $w.clat_ns.mean * $w.total_ios) / $n else 0 end) \($m.clat_ns.percentile["99.000000"] // 0) \($n)"' "$json") ||
    die "no fio numbers for $policy"
  local err iops bw mean p99 ios
  read -r err iops bw mean p99 ios <<<"$line"
  [[ $err == 0 && $ios -gt 0 ]] || die "fio under $policy: error $err, $ios I/Os"
  awk -v side="$side" -v sc="$scenario" -v p="$policy" -v iops="$iops" -v bw="$bw" \
    -v mean="$mean" -v p99="$p99" -v ios="$ios" -v busy=$((b1 - b0)) -v hz="$hz" \
    -v su=$((su1 - su0)) -v ss=$((ss1 - ss0)) -v srv="${spid:+1}" -v wire=$((w1 - w0)) 'BEGIN {
      us = 1e6 / hz
      printf "%s %s %s %.0f %.2f %.0f %.0f %.1f %s %s %d %.0f\n", side, sc, p, iops, bw / 1024,
        mean / 1000, p99 / 1000, busy * us / ios,
        srv ? sprintf("%.1f", su * us / ios) : "-", srv ? sprintf("%.1f", ss * us / ios) : "-", ios,
        wire / ios
    }' | tee -a "$rows"
}

scenario=
echo "datapath_vs_kernel: $side $scenarios, fio $( ((read_pct == 100)) && echo randread || echo "randrw ${read_pct}% reads") 4k ${numjobs}x${iodepth}, ${runtime}s per policy, $(uname -r)"
if [[ $side == kernel ]]; then
  # Round 1 every policy, the later rounds the two compared against.
  for ((r = 1; r <= rounds; r++)); do
    pols=("${policies[@]}") label=""
    ((r > 1)) && pols=(round-robin queue-depth) label=/r$r
    for scenario in ${scenarios//,/ }; do
      for p in "${pols[@]}"; do
        tb_iopolicy "$p" || die "tb_iopolicy $p"
        run_fio "$p$label" "$TB_HEAD"
      done
    done
  done
  exit 0
fi

# datapath_run policy [label [binary [args...]]]: the datapath under policy,
# fio on its device (the row is called label); with perf_on=1, `perf record
# -a -g` over the run.
perf_on=0
datapath_run() {
  local policy=$1 label=${2:-$1} b=${3:-$bin}
  local args=("${dp_args[@]}")
  (($# > 3)) && args=("${@:4}")
  local log=$TB_OUT/server-$scenario-${label//\//-}.log
  "$b" datapath --namespace auto --policy "$policy" --web.listen-address "" \
    "${args[@]}" >"$TB_OUT/device.txt" 2>"$log" &
  local pid=$!
  if ! tb_wait 20 test -s "$TB_OUT/device.txt"; then
    cat "$log" >&2
    die "the datapath announced no device under $policy"
  fi
  local dev
  dev=$(head -1 "$TB_OUT/device.txt")
  [[ -b $dev ]] || die "'$dev' is not a block device"
  local ppid=
  if ((perf_on)); then
    perf record -a -g -F 499 -o "$TB_OUT/perf.data" -- sleep "$runtime" \
      >"$TB_OUT/perf-record.log" 2>&1 &
    ppid=$!
  fi
  # A variant whose ARGS serve metrics (--web.listen-address ADDR:PORT) has
  # its selector's state per path (cap, base latency, in flight,
  # selections) sampled twice a second over the run, to see what it did.
  local listen="" mpid=
  for ((k = 0; k < ${#args[@]}; k++)); do
    [[ ${args[k]} == --web.listen-address ]] && listen=${args[k + 1]:-}
    [[ ${args[k]} == --web.listen-address=* ]] && listen=${args[k]#*=}
  done
  if [[ -n $listen ]]; then
    (while sleep 0.5; do
      echo "# $(date +%s.%N)"
      curl -s --max-time 1 "http://$listen/metrics" |
        grep -E '^pathwise_datapath_path_(cap|base_latency_seconds|inflight|selections_total)'
    done) >"$TB_OUT/metrics-$scenario-${label//\//-}.txt" 2>/dev/null &
    mpid=$!
  fi
  run_fio "$label" "$dev" "$pid"
  [[ -n $mpid ]] && kill "$mpid" 2>/dev/null
  [[ -n $ppid ]] && wait "$ppid"
  kill -TERM "$pid"
  wait "$pid" || die "the datapath exited $? after SIGTERM under $policy"
  : >"$TB_OUT/device.txt"
  tb_wait 10 eval '! ls /dev/ublkb* >/dev/null 2>&1' || die "ublk device left behind"
}

for scenario in ${scenarios//,/ }; do
  for p in "${policies[@]}"; do
    datapath_run "$p"
  done
done

IFS=';' read -ra variants <<<"$variant_list"
for v in "${variants[@]}"; do
  IFS='|' read -r vname vbin vargs <<<"$v"
  [[ -x $vbin ]] || die "variant $vname: no binary at $vbin"
  # A round (a variant named rN: the same binary and flags again) runs
  # every policy; another build or flags, the two it is compared on.
  vpols=(round-robin pathwise)
  [[ $vname =~ ^r[0-9]+$ ]] && vpols=("${policies[@]}")
  for scenario in ${variant_scenarios//,/ }; do
    for p in "${vpols[@]}"; do
      # shellcheck disable=SC2086 # vargs is a list of flags
      datapath_run "$p" "$p/$vname" "$vbin" $vargs
    done
  done
done

if [[ $perf == 1 ]]; then
  command -v perf >/dev/null || die "PERF=1 but perf is not installed (apt-get install linux-perf)"
  perf_on=1
  scenario=symmetric
  datapath_run pathwise pathwise+perf
  # perf is a diagnosis: without it the rows above still stand.
  perf report -i "$TB_OUT/perf.data" --no-children --sort comm,dso,sym --stdio \
    --percent-limit 0.3 >"$TB_OUT/perf-report.txt" 2>"$TB_OUT/perf-report.log" ||
    echo "datapath_vs_kernel: perf report failed: $(tail -3 "$TB_OUT/perf-report.log" "$TB_OUT/perf-record.log")" >&2
  perf report -i "$TB_OUT/perf.data" --no-children --sort comm --stdio \
    >"$TB_OUT/perf-comm.txt" 2>/dev/null
  rm -f "$TB_OUT/perf.data"
fi
exit 0
