#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# BPF sampler overhead benchmark.
#
# Workload: a loop device on a file in tmpfs, fio randread 4k, QD 32,
# io_uring, fixed time. Measured in one run of this script:
#   1. IOPS without sampling / with pathwise sampling / with Debian's
#      libbpf-tools biolatency, interleaved over several rounds
#      (kernel.bpf_stats_enabled off, as in production).
#   2. ns per I/O of all attached BPF programs (bpf_prog_info run_time_ns
#      with kernel.bpf_stats_enabled=1) for pathwise (kernel start time,
#      the default; and its own-start-stamp mode), for pathwise with the
#      per hardware queue statistics (the agent's --queues) and for
#      biolatency. Step 1 also runs pathwise with --queues.
#   3. The pathwise sampler process' CPU and RSS while the workload runs
#      (it reads all maps every second, as the agent does), and the same for
#      the whole agent (`pathwise serve --bpf=required --devices=all`,
#      scraped every second), with its IOPS ratio in the interleaved rounds.
# Results go to bench/results/bpf_overhead.txt (or $OUT).
#
# Usage: bench/bpf_overhead.sh [BUILD_DIR]   (default: build)
# Env:   RUNTIME (s, default 5), ROUNDS (default 12), STATS_ROUNDS (5: of
#        step 2), OUT, FILE_MB (512),
#        AGENT (1; 0 leaves out the whole-agent rounds, e.g. while the
#        pathwise binary is not built: the results file says so),
#        PLACEMENT (bench/placement.sh; unset: the scheduler places fio
#        and the loop device's worker; same: both on CPU 0, as NVMe
#        completes on the submitting CPU's queue; cross: fio on CPU 0, the
#        worker on CPU 1. The worker is the unbound workqueues' cpumask,
#        restored on exit.)
#        BATCH (1: fio submits and reaps each I/O in its own system call;
#        N: N at a time, --iodepth_batch_submit/--iodepth_batch_complete_min.
#        Where every kernel entry leaves the pages a program reads cold,
#        as measured in this guest (results/bpf_overhead_batching_ab.txt),
#        a system call per I/O makes each of those pages a miss per I/O;
#        BATCH=16 measures the programs' own work, as at high IOPS, where
#        submission is batched.)
#
# IOPS on a small VM vary by several % from run to run; the ratio is the
# median over rounds of (config IOPS / the same round's no-sampling IOPS).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
tool=$build/bench/pathwise_bpf_tool
agent=$build/pathwise
AGENT_PORT=${AGENT_PORT:-19877}
RUNTIME=${RUNTIME:-5}
ROUNDS=${ROUNDS:-12}
STATS_ROUNDS=${STATS_ROUNDS:-5}
FILE_MB=${FILE_MB:-512}
BATCH=${BATCH:-1}
[[ $BATCH =~ ^[1-9][0-9]*$ && $BATCH -le 32 ]] || { echo "bpf_overhead: BATCH must be 1..32 (the queue depth)" >&2; exit 2; }
OUT=${OUT:-$here/results/bpf_overhead.txt}
BIOLATENCY=/usr/sbin/biolatency
# shellcheck source=bench/placement.sh
. "$here/placement.sh"

die() { echo "bpf_overhead: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root"
[[ -x $tool ]] || die "$tool not built (ninja -C $build pathwise_bpf_tool)"
AGENT=${AGENT:-1}
[[ $AGENT == 0 || -x $agent ]] || die "$agent not built (ninja -C $build pathwise; AGENT=0 leaves the agent out)"
[[ -x $BIOLATENCY ]] || die "$BIOLATENCY missing (apt-get install libbpf-tools)"
for c in fio losetup jq bpftool curl; do
  command -v "$c" >/dev/null || die "$c missing"
done

work=$(mktemp -d /tmp/pathwise-bench.XXXXXX)
loop=""
bg_pid=""
cleanup() {
  set +e  # run every step even if one fails
  if [[ -n $bg_pid ]]; then
    kill -INT "$bg_pid" 2>/dev/null
    wait "$bg_pid" 2>/dev/null
  fi
  [[ -n $loop ]] && losetup -d "$loop" 2>/dev/null
  umount "$work/tmpfs" 2>/dev/null || true
  rm -rf "$work"
  sysctl -q kernel.bpf_stats_enabled="${stats_before:-0}" >/dev/null 2>&1 || true
  placement_restore
}
trap cleanup EXIT
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q kernel.bpf_stats_enabled=0
placement_apply

mkdir -p "$work/tmpfs"
mount -t tmpfs -o size=$((FILE_MB + 64))M tmpfs "$work/tmpfs"
fallocate -l ${FILE_MB}M "$work/tmpfs/backing.img"
loop=$(losetup --find --show --direct-io=on "$work/tmpfs/backing.img" 2>/dev/null) ||
  loop=$(losetup --find --show "$work/tmpfs/backing.img")
dio=$(cat /sys/block/${loop#/dev/}/loop/dio 2>/dev/null || echo "?")
# Fill it so reads hit real pages.
dd if=/dev/zero of="$loop" bs=1M count=$FILE_MB oflag=direct status=none

fio_iops() {  # -> IOPS of one fixed-time run
  fio --name=bench --filename="$loop" --rw=randread --bs=4k --direct=1 \
    --ioengine=io_uring --iodepth=32 --numjobs=1 --time_based \
    --iodepth_batch_submit="$BATCH" --iodepth_batch_complete_min="$BATCH" \
    --runtime="$RUNTIME" --ramp_time=1 --randrepeat=0 "${fio_cpu[@]}" \
    --output-format=json | jq '.jobs[0].read.iops'
}

start_bg() {  # start_bg READY_FILE CMD... ; waits until READY_FILE exists
  local ready=$1; shift
  rm -f "$ready"
  "$@" >"$work/bg.out" 2>"$work/bg.err" &
  bg_pid=$!
  for _ in $(seq 1 100); do
    [[ -e $ready ]] && return 0
    kill -0 "$bg_pid" 2>/dev/null || { cat "$work/bg.err" >&2; die "$1 exited"; }
    sleep 0.1
  done
  die "$1 did not get ready"
}

stop_bg() {
  kill -INT "$bg_pid" 2>/dev/null || true
  wait "$bg_pid" 2>/dev/null || true
  bg_pid=""
}

# The whole agent, as deployed (BPF required, every block device), scraped
# every second while fio runs: appends IOPS to $work/agent and
# "cpu_pct=.. max_rss_kb=.. scrapes=.." to $work/agent_self.
agent_round() {
  local url=http://127.0.0.1:$AGENT_PORT ticks0 ticks1 t0 t1 iops scraper
  "$agent" serve --bpf=required --devices=all --interval=1s \
    --web.listen-address=127.0.0.1:$AGENT_PORT >"$work/bg.out" 2>"$work/bg.err" &
  bg_pid=$!
  for _ in $(seq 1 100); do
    curl -sf -o /dev/null "$url/healthz" && break
    kill -0 "$bg_pid" 2>/dev/null || { cat "$work/bg.err" >&2; die "pathwise serve exited"; }
    sleep 0.1
  done
  curl -sf -o "$work/agent.prom" "$url/metrics" || die "pathwise serve: no /metrics"
  grep -q '^pathwise_sampler_info{source="bpf"} 1' "$work/agent.prom" ||
    die "pathwise serve: the sampler is not bpf"
  ( n=0; while sleep 1; do curl -sf -o /dev/null "$url/metrics" && n=$((n + 1)); echo $n >"$work/scrapes"; done ) &
  scraper=$!
  # CPU ns of all the agent's threads (schedstat: exact, unlike ticks).
  cpu_ns() { cat /proc/$bg_pid/task/*/schedstat | awk '{s += $1} END {print s}'; }
  ticks0=$(cpu_ns); t0=$(date +%s.%N)
  iops=$(fio_iops)
  ticks1=$(cpu_ns); t1=$(date +%s.%N)
  kill "$scraper" 2>/dev/null; wait "$scraper" 2>/dev/null || true
  echo "$iops" >>"$work/agent"
  echo "cpu_pct=$(awk -v a="$ticks0" -v b="$ticks1" -v t0="$t0" -v t1="$t1" \
    'BEGIN { printf "%.2f", 100 * (b - a) / 1e9 / (t1 - t0) }') max_rss_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$bg_pid/status") scrapes=$(cat "$work/scrapes" 2>/dev/null || echo 0)" \
    >>"$work/agent_self"
  stop_bg
}

# biolatency has no readiness signal, and bpftool here does not show the
# owning pids: its programs are the ones that appear after it starts (not
# named pw_*, which are pathwise's).
prog_ids() { bpftool -j prog show | jq -r '.[] | select(.name | startswith("pw_") | not) | .id' | sort -n; }
start_biolatency() {
  prog_ids >"$work/ids.before"
  "$BIOLATENCY" >"$work/bg.out" 2>"$work/bg.err" &
  bg_pid=$!
  for _ in $(seq 1 100); do
    prog_ids | comm -13 "$work/ids.before" - >"$work/bio.ids"
    # issue + complete attached (its output is block-buffered: no banner).
    if (($(wc -l <"$work/bio.ids") >= 2)); then sleep 0.5; return 0; fi
    kill -0 "$bg_pid" 2>/dev/null || { cat "$work/bg.err" >&2; die "biolatency exited"; }
    sleep 0.1
  done
  die "biolatency did not load"
}

# "run_time_ns run_cnt_of_completion_programs" over the ids in FILE.
prog_stats_of_ids() {
  bpftool -j prog show | jq -r --slurpfile ids <(jq -s . "$1") '
    [.[] | select(.id as $i | $ids[0] | index($i))] as $ps
    | ($ps | map(.run_time_ns // 0) | add) as $ns
    | ($ps | map(select(.name | test("complete"))) | map(.run_cnt // 0) | add) as $done
    | "\($ns) \($done)"'
}

mean() { awk '{s+=$1; n++} END {printf "%.1f", s/n}'; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) printf "%.4f", v[(NR+1)/2]; else printf "%.4f", (v[NR/2]+v[NR/2+1])/2}'; }
stdev() { awk '{s+=$1; q+=$1*$1; n++} END {m=s/n; v=q/n-m*m; if (v<0) v=0; printf "%.1f", sqrt(v)}'; }

load_start=$(uptime | sed 's/.*load average/load average/')
echo "warming up..." >&2
RUNTIME_SAVE=$RUNTIME; RUNTIME=3; fio_iops >/dev/null; RUNTIME=$RUNTIME_SAVE

: >"$work/pwq"; : >"$work/base"; : >"$work/pw"; : >"$work/bio"; : >"$work/pw_self"; : >"$work/agent"; : >"$work/agent_self"
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r/$ROUNDS" >&2
  fio_iops >>"$work/base"
  start_bg "$work/ready" "$tool" --no_nvme --interval=1 --ready_file="$work/ready"
  fio_iops >>"$work/pw"
  stop_bg
  grep '^self ' "$work/bg.out" >>"$work/pw_self"
  start_bg "$work/ready" "$tool" --no_nvme --queues --interval=1 --ready_file="$work/ready"
  fio_iops >>"$work/pwq"
  stop_bg
  start_biolatency
  fio_iops >>"$work/bio"
  stop_bg
  [[ $AGENT == 0 ]] || agent_round
done

pw_ns_per_io() {  # FILE... -> "ns_per_io total_ns completions" (summed over the files)
  awk '
    /^prog / {
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^run_time_ns=/) { split($i, a, "="); ns += a[2] }
        if ($i ~ /^run_cnt=/) { split($i, b, "="); if ($2 ~ /^pw_done/) done += b[2] }
      }
    }
    END { printf "%.1f %d %d\n", (done ? ns / done : 0), ns, done }' "$@"
}
# per_prog FILES...: "issue_ns done_ns" per run of the issue and the
# completion program (tracepoints block_rq_issue, block_rq_complete), over
# all FILES: where a configuration's cost sits, each against its own empty
# program's.
per_prog() {
  awk '/^prog /{ for (i = 1; i <= NF; i++) {
        if ($i ~ /^run_time_ns=/) { split($i, a, "="); n = a[2] }
        if ($i ~ /^run_cnt=/) { split($i, b, "="); c = b[2] } }
      if ($3 ~ /block_rq_issue/) { in_ns += n; in_c += c }
      if ($3 ~ /block_rq_complete/) { dn_ns += n; dn_c += c } }
    END { printf "%.1f %.1f\n", in_c ? in_ns / in_c : 0, dn_c ? dn_ns / dn_c : 0 }' "$@"
}
# Floor: what bpf_stats accounting costs for an empty issue + complete pair.
floor_of() { per_prog "$1" | awk '{ printf "%.1f", $1 + $2 }'; }

# ns per I/O with kernel.bpf_stats_enabled=1, STATS_ROUNDS interleaved
# rounds of every configuration: on a loaded host one 5 s run per
# configuration says little, each lands on another moment of the load.
# ns/IO = all rounds' run time over all rounds' completions; the ratios of
# the own stamp to the kernel stamp and to biolatency are also given as
# medians of the per-round ratios (each round against its own floor).
sysctl -q kernel.bpf_stats_enabled=1
: >"$work/bio_stats"; : >"$work/floors"; : >"$work/own_vs_kernel"; : >"$work/own_vs_bio"
for sr in $(seq 1 "$STATS_ROUNDS"); do
  echo "bpf_stats round $sr/$STATS_ROUNDS" >&2
  start_bg "$work/ready" "$tool" --no_nvme --interval=1 --ready_file="$work/ready"
  pw_stats_iops=$(fio_iops)
  stop_bg
  cp "$work/bg.out" "$work/pw_stats.$sr.out"
  start_bg "$work/ready" "$tool" --no_nvme --queues --interval=1 --ready_file="$work/ready"
  pwq_stats_iops=$(fio_iops)
  stop_bg
  cp "$work/bg.out" "$work/pwq_stats.$sr.out"
  start_bg "$work/ready" "$tool" --no_nvme --force_own_start --interval=1 --ready_file="$work/ready"
  pw_own_iops=$(fio_iops)
  stop_bg
  cp "$work/bg.out" "$work/pw_own.$sr.out"
  start_bg "$work/ready" "$tool" --nop_calibration --ready_file="$work/ready"
  nop_iops=$(fio_iops)
  stop_bg
  cp "$work/bg.out" "$work/nop.$sr.out"
  start_biolatency
  bio_stats_iops=$(fio_iops)
  read -r bio_ns_r bio_done_r < <(prog_stats_of_ids "$work/bio.ids")
  bio_names=$(bpftool -j prog show | jq -r --slurpfile ids <(jq -s . "$work/bio.ids") \
    '[.[] | select(.id as $i | $ids[0] | index($i)) | .name] | join(",")')
  stop_bg
  echo "$bio_ns_r $bio_done_r" >>"$work/bio_stats"
  f_r=$(floor_of "$work/nop.$sr.out"); echo "$f_r" >>"$work/floors"
  read -r pw_r _ < <(pw_ns_per_io "$work/pw_stats.$sr.out")
  read -r own_r _ < <(pw_ns_per_io "$work/pw_own.$sr.out")
  awk -v o="$own_r" -v k="$pw_r" -v f="$f_r" 'BEGIN { if (k - f > 0) print (o - f) / (k - f) }' >>"$work/own_vs_kernel"
  awk -v o="$own_r" -v n="$bio_ns_r" -v d="$bio_done_r" -v f="$f_r" 'BEGIN { if (d && n / d - f > 0) print (o - f) / (n / d - f) }' >>"$work/own_vs_bio"
done
sysctl -q kernel.bpf_stats_enabled=0
cp "$work/pw_stats.$STATS_ROUNDS.out" "$work/pw_stats.out"
cp "$work/pwq_stats.$STATS_ROUNDS.out" "$work/pwq_stats.out"
cp "$work/pw_own.$STATS_ROUNDS.out" "$work/pw_own.out"

read -r pw_nsio pw_ns pw_done < <(pw_ns_per_io "$work"/pw_stats.[0-9]*.out)
read -r own_nsio own_ns own_done < <(pw_ns_per_io "$work"/pw_own.[0-9]*.out)
read -r pwq_nsio pwq_ns pwq_done < <(pw_ns_per_io "$work"/pwq_stats.[0-9]*.out)
read -r bio_ns bio_done < <(awk '{n += $1; d += $2} END {print n + 0, d + 0}' "$work/bio_stats")
bio_nsio=$(awk -v n="$bio_ns" -v d="$bio_done" 'BEGIN { printf "%.1f", d ? n / d : 0 }')
floor=$(mean <"$work/floors")
floors=$(tr '\n' ' ' <"$work/floors")
net() { awk -v a="$1" -v f="$floor" 'BEGIN { printf "%.1f", a - f }'; }
pwq_net=$(net "$pwq_nsio"); pw_net=$(net "$pw_nsio"); own_net=$(net "$own_nsio"); bio_net=$(net "$bio_nsio")
vs_bio_net=$(awk -v a="$pw_net" -v b="$bio_net" 'BEGIN { printf "%.3f", b ? a / b : 0 }')
own_vs_bio_net=$(awk -v a="$own_net" -v b="$bio_net" 'BEGIN { printf "%.3f", b ? a / b : 0 }')
own_vs_kernel_net=$(awk -v a="$own_net" -v b="$pw_net" 'BEGIN { printf "%.3f", b ? a / b : 0 }')

base_mean=$(mean <"$work/base"); base_sd=$(stdev <"$work/base")
pw_mean=$(mean <"$work/pw"); pw_sd=$(stdev <"$work/pw")
bio_mean=$(mean <"$work/bio"); bio_sd=$(stdev <"$work/bio")
ratio=$(paste "$work/pw" "$work/base" | awk '{print $1/$2}' | median)
pwq_mean=$(mean <"$work/pwq"); pwq_sd=$(stdev <"$work/pwq")
pwq_ratio=$(paste "$work/pwq" "$work/base" | awk '{print $1/$2}' | median)
pwq_vs_pw=$(awk -v a="$pwq_nsio" -v b="$pw_nsio" 'BEGIN { printf "%.3f", b ? a / b : 0 }')
pwq_vs_bio=$(awk -v a="$pwq_nsio" -v b="$bio_nsio" 'BEGIN { printf "%.3f", b ? a / b : 0 }')
bio_ratio=$(paste "$work/bio" "$work/base" | awk '{print $1/$2}' | median)
ratio_of_means=$(awk -v a="$pw_mean" -v b="$base_mean" 'BEGIN { printf "%.4f", a / b }')
vs_bio=$(awk -v a="$pw_nsio" -v b="$bio_nsio" 'BEGIN { printf "%.3f", b ? a / b : 0 }')
cpu_pct=$(awk '{for(i=1;i<=NF;i++) if ($i ~ /^cpu_pct=/) {split($i,a,"="); print a[2]}}' "$work/pw_self" | mean)
rss_kb=$(awk '{for(i=1;i<=NF;i++) if ($i ~ /^max_rss_kb=/) {split($i,a,"="); print a[2]}}' "$work/pw_self" | sort -n | tail -1)
if [[ $AGENT == 0 ]]; then
  agent_mean="not run (AGENT=0)"; agent_sd="-"; agent_ratio="not run"
  agent_cpu="not run"; agent_rss="not run"; agent_scrapes=0
else
  agent_mean=$(mean <"$work/agent"); agent_sd=$(stdev <"$work/agent")
  agent_ratio=$(paste "$work/agent" "$work/base" | awk '{print $1/$2}' | median)
  field() { awk -v f="$1" '{for(i=1;i<=NF;i++) if (index($i, f "=") == 1) print substr($i, length(f) + 2)}' "$work/agent_self"; }
  agent_cpu=$(field cpu_pct | mean)
  agent_rss=$(field max_rss_kb | sort -n | tail -1)
  agent_scrapes=$(field scrapes | awk '{s+=$1} END {print s}')
fi
mode=$(awk '/^mode /{print $2}' "$work/pw_stats.out")
verdict() { awk -v v="$1" -v g="$2" -v op="$3" 'BEGIN { ok = (op == ">=") ? (v >= g) : (v <= g); print ok ? "met" : "MISSED" }'; }

mkdir -p "$(dirname "$OUT")"
{
  echo "# pathwise BPF sampler overhead (bench/bpf_overhead.sh)"
  echo "date:        $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "kernel:      $(uname -r)"
  echo "cpu:         $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') x $(nproc)"
  # Both tools read the clock per I/O; its cost moves the ratios.
  echo "clock:       $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?') (available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource 2>/dev/null || echo '?'))"
  echo "pathwise:    $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), block programs via $mode"
  echo "biolatency:  $BIOLATENCY (Debian libbpf-tools $(dpkg-query -W -f='${Version}' libbpf-tools 2>/dev/null || echo '?'))"
  echo "workload:    fio randread 4k QD32 io_uring, submitted and reaped $BATCH at a time, ${RUNTIME}s x ${ROUNDS} rounds per config, loop device on tmpfs (dio=$dio), ${FILE_MB} MiB"
  echo "placement:   $(placement_text)"
  echo "host load:   uptime at start: $load_start; at the end: $(uptime | sed 's/.*load average/load average/')"
  echo
  echo "## IOPS (kernel.bpf_stats_enabled=0), interleaved rounds"
  echo "no sampling:          mean $base_mean  sd $base_sd   runs: $(tr '\n' ' ' <"$work/base")"
  echo "pathwise:             mean $pw_mean  sd $pw_sd   runs: $(tr '\n' ' ' <"$work/pw")"
  echo "biolatency:           mean $bio_mean  sd $bio_sd   runs: $(tr '\n' ' ' <"$work/bio")"
  echo "pathwise/none ratio:  median of per-round ratios $ratio, ratio of means $ratio_of_means   (goal >= 0.99: $(verdict "$ratio" 0.99 '>='))"
  echo "pathwise --queues:    mean $pwq_mean  sd $pwq_sd   runs: $(tr '\n' ' ' <"$work/pwq")"
  echo "pathwise --queues/none: median of per-round ratios $pwq_ratio   (goal >= 0.99: $(verdict "$pwq_ratio" 0.99 '>='))"
  echo "biolatency/none:      median of per-round ratios $bio_ratio"
  echo "agent (serve):        mean $agent_mean  sd $agent_sd   runs: $(tr '\n' ' ' <"$work/agent")"
  echo "agent/none:           median of per-round ratios $agent_ratio   (the whole agent, scraped every second)"
  echo
  echo "## BPF program cost (kernel.bpf_stats_enabled=1): sum of run_time_ns of all"
  echo "## programs / completions. 'raw' is what bpf_stats reports; 'net' subtracts"
  echo "## the accounting floor measured with empty programs on the same tracepoints."
  echo "## $STATS_ROUNDS interleaved rounds of ${RUNTIME}s per configuration; ns/IO over all rounds"
  echo "accounting floor (empty issue+complete pair): $floor ns/IO, mean of the rounds' $floors  (IOPS under stats, last round $nop_iops)"
  echo "pathwise (kernel start time, default): raw $pw_nsio  net $pw_net ns/IO   ($pw_ns ns over $pw_done I/Os; IOPS under stats $pw_stats_iops)"
  echo "pathwise (own start stamp, forced):    raw $own_nsio  net $own_net ns/IO   ($own_ns ns over $own_done I/Os; IOPS under stats $pw_own_iops)"
  echo "biolatency:                            raw $bio_nsio  net $bio_net ns/IO   ($bio_ns ns over $bio_done I/Os; IOPS under stats $bio_stats_iops; programs $bio_names)"
  echo "pathwise/biolatency:  raw $vs_bio  net $vs_bio_net   (goal <= 0.5: raw $(verdict "$vs_bio" 0.5 '<='), net $(verdict "$vs_bio_net" 0.5 '<='))"
  echo "pathwise ns/IO:       raw $pw_nsio  net $pw_net   (goal <= 100: raw $(verdict "$pw_nsio" 100 '<='), net $(verdict "$pw_net" 100 '<='))"
  own_vs_bio_med=$(median <"$work/own_vs_bio"); own_vs_kernel_med=$(median <"$work/own_vs_kernel")
  echo "own stamp/biolatency: net $own_vs_bio_net   (goal <= 0.3: $(verdict "$own_vs_bio_net" 0.3 '<=')); median of per-round ratios $own_vs_bio_med, rounds: $(tr '\n' ' ' <"$work/own_vs_bio")"
  echo "own stamp/kernel start time: net $own_vs_kernel_net   (goal <= 1.5: $(verdict "$own_vs_kernel_net" 1.5 '<=')); median of per-round ratios $own_vs_kernel_med, rounds: $(tr '\n' ' ' <"$work/own_vs_kernel")"
  read -r nop_in nop_dn < <(per_prog "$work"/nop.[0-9]*.out)
  read -r pw_in pw_dn < <(per_prog "$work"/pw_stats.[0-9]*.out)
  read -r own_in own_dn < <(per_prog "$work"/pw_own.[0-9]*.out)
  d() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
  echo "per program, ns per run over all rounds (net: less the empty program on the same tracepoint):"
  echo "  block_rq_issue:    empty $nop_in  kernel-stamped $pw_in (net $(d "$pw_in" "$nop_in"))  own stamp $own_in (net $(d "$own_in" "$nop_in"))"
  echo "  block_rq_complete: empty $nop_dn  kernel-stamped $pw_dn (net $(d "$pw_dn" "$nop_dn"))  own stamp $own_dn (net $(d "$own_dn" "$nop_dn"))"
  echo "pathwise --queues (per hardware queue): raw $pwq_nsio  net $pwq_net ns/IO   ($pwq_ns ns over $pwq_done I/Os; IOPS under stats $pwq_stats_iops)"
  echo "pathwise --queues ns/IO: raw $pwq_nsio  net $pwq_net   (goal <= 100: raw $(verdict "$pwq_nsio" 100 '<='), net $(verdict "$pwq_net" 100 '<=')); --queues/default raw $pwq_vs_pw; /biolatency raw $pwq_vs_bio (goal <= 0.5: $(verdict "$pwq_vs_bio" 0.5 '<='))"
  echo
  echo "## pathwise sampler process (reads all maps every 1 s)"
  echo "cpu:  ${cpu_pct}% of one CPU (mean over rounds)"
  echo "rss:  ${rss_kb} kB (max)"
  echo
  echo "## the whole agent: pathwise serve --bpf=required --devices=all --interval=1s,"
  echo "## /metrics scraped every second while fio runs"
  echo "cpu:  ${agent_cpu}% of one CPU (mean over rounds; $agent_scrapes scrapes)"
  echo "rss:  ${agent_rss} kB (max, VmHWM)"
  echo
  echo "## raw pathwise tool output (bpf_stats run)"
  sed 's/^/  /' "$work/pw_stats.out"
  echo
  echo "## raw pathwise tool output, --queues (bpf_stats run)"
  sed 's/^/  /' "$work/pwq_stats.out"
  echo
  echo "## raw pathwise tool output, own start stamp forced (bpf_stats run)"
  sed 's/^/  /' "$work/pw_own.out"
} >"$OUT"
cat "$OUT"
