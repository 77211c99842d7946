#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The kernel's NVMe multipath against pathwise's userspace datapath, in the
# testbed (NVMe/TCP, two paths, 6.12 guest): the same fio job (random 4k
# reads, NUMJOBS x IODEPTH, io_uring, direct) on
#   - the kernel's head device (--multipath on) under numa, round-robin and
#     queue-depth (one boot per scenario),
#   - `pathwise datapath`'s /dev/ublkbN (--multipath off) under round-robin,
#     queue-depth and pathwise (one boot per scenario),
# in four scenarios: symmetric paths; path 0 +30 ms (netem); path 0 lossy
# (the lab's loss schedule, each quarter of the run: 5 %, 0, 3 %, 0); path 0
# down from 1/4 to 3/5 of the run. Beside each row, `pathwise lab`'s
# prediction for the same setup (see the results file's notes).
# Opt-in, the latency-bound pair (the testbed's CPU is the limit in the four
# above; on hardware a path's round trip is): lb-symmetric, both paths
# --base-delay ms more (netem); lb-delay30, the same plus 30 ms on path 0.
# Opt-in, a capacity-bound case: cb-asym, the read data of path 0 and path 1
# limited to --cb-rates "R0,R1" Mbit/s (netem rate on the target's end;
# default 8,24: ~240 and ~720 4k reads a second, a quarter of what the
# guest's CPU sustains, so the links set the pace).
#
#   bench/datapath_vs_kernel.sh [--runtime S] [--numjobs N] [--iodepth N]
#       [--scenarios "symmetric delay30 lossy down"] [--sides "kernel datapath"]
#       [--base-delay MS] [--cb-rates R0,R1] [--rounds N]
#       [--datapath-args "--queues 1 --depth 64"] [--perf] [--pathwise BIN]
#       [--out FILE] [--label TEXT] [--work DIR] [--variant "NAME|BIN|ARGS"]...
#       [--variant-scenarios "symmetric delay30"] [--read-pct PCT]
#
# --read-pct PCT: random reads and writes, PCT % of them reads (default
# 100: random reads only); rows count both. With writes, cb-asym's paths
# are direction-bound: netem limits each path's read data, not its writes.
# The lab's scenarios then have the same share of reads and, for cb-asym,
# read_bandwidth (the target->host link) alone; its columns sum both ops.
# --variant: another datapath build or flags, run in the datapath's boot on
# the --variant-scenarios (default symmetric and delay30; the table shows
# those also in --scenarios) under round-robin and pathwise (rows
# POLICY/NAME), after the main rows, variants in the order given.
# --rounds N: N rounds of each comparison: the kernel's round-robin and
# queue-depth N - 1 more times in its boot (rows POLICY/rN), the datapath's
# three policies as N - 1 variants of the same binary and flags
# (rows POLICY/rN, on --variant-scenarios, which then defaults to
# --scenarios); a summary gives each one's mean and range over its rounds
# and the datapath's pathwise against the kernel's best with error bars.
# --work DIR keeps the raw runs there, and a boot whose rows are already in
# DIR is not run again (to resume, or to add a side later).
# Writes FILE (default bench/results/datapath_vs_kernel.txt). One boot per
# side runs all its scenarios (boots wait for /tmp/pathwise-testbed.lock,
# which each takes for itself only). Exits non-zero with one line
# when fio, the kernel, ublk_drv or the datapath is missing, or a run
# produced no numbers. VM time: ~(15 s + 12 x (RUNTIME + ~4 s)) per side.
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
runtime=15 numjobs=2 iodepth=2 work=""
# The latency-bound pair's extra round trip on both paths: ~10x the guest
# CPU one I/O costs (460-530 us for the datapath, 360-375 for the kernel;
# on hardware a ~100 us fabric round trip is 10-20x a few us of CPU per
# I/O). At 4 outstanding the paths then allow ~4 / 5.7 ms = ~700 IOPS,
# a quarter of the 2.3-3.2k IOPS the guest's CPU sustains: the paths set
# the pace, not the CPU.
base_delay=5 cb_rates=8,24 rounds=1 vs_set=0 read_pct=100
scenarios="symmetric delay30 lossy down"
sides="kernel datapath"
dp_args="--queues 1 --depth 64"
perf=0 label="" variants="" variant_scenarios="symmetric delay30"
bin=$root/build/pathwise
out=$root/bench/results/datapath_vs_kernel.txt

die() {
  echo "datapath_vs_kernel: $*" >&2
  exit 1
}

while (($#)); do
  case $1 in
    --runtime) runtime=$2 ;;
    --numjobs) numjobs=$2 ;;
    --iodepth) iodepth=$2 ;;
    --base-delay) base_delay=$2 ;;
    --cb-rates) cb_rates=$2 ;;
    --rounds) rounds=$2 ;;
    --read-pct) read_pct=$2 ;;
    --scenarios) scenarios=$2 ;;
    --sides) sides=$2 ;;
    --datapath-args) dp_args=$2 ;;
    --pathwise) bin=$2 ;;
    --out) out=$2 ;;
    --label) label=$2 ;;
    --work) work=$2 ;;
    --variant) variants+="${variants:+;}$2" ;;
    --variant-scenarios) variant_scenarios=$2 vs_set=1 ;;
    --perf) perf=1; shift; continue ;;
    *) die "unknown argument '$1' (see the header of $0)" ;;
  esac
  shift 2 || die "$1 needs a value"
done

[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds '$rounds': want a count >= 1"
[[ $read_pct =~ ^[0-9]+$ ]] && ((read_pct <= 100)) || die "--read-pct '$read_pct': want 0-100"
[[ $cb_rates =~ ^[0-9]+(\.[0-9]+)?,[0-9]+(\.[0-9]+)?$ ]] ||
  die "--cb-rates '$cb_rates': want R0,R1 in Mbit/s (e.g. 8,24)"
if ((rounds > 1)); then
  ((vs_set)) || variant_scenarios=$scenarios
  for ((r = 2; r <= rounds; r++)); do
    variants+="${variants:+;}r$r|$bin|$dp_args"
  done
fi

testbed=$root/tests/testbed/testbed
case_script=$root/bench/datapath_vs_kernel_case.sh
command -v fio >/dev/null || die "fio is not installed (apt-get install fio); the guest runs the host's"
command -v jq >/dev/null || die "jq is not installed"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is not installed"
if [[ " $sides " == *" datapath "* ]]; then
  [[ -x $bin ]] || die "no pathwise binary at $bin (build it: ninja -C build pathwise)"
  "$bin" datapath --help >/dev/null 2>&1 || die "$bin has no datapath subcommand"
fi
"$testbed" prepare --kernel 6.12 >/dev/null || die "testbed prepare --kernel 6.12 failed (no 6.12 kernel)"
cache=${PATHWISE_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pathwise/testbed}
find "$cache/kernels" -path '*6.12*' -name 'ublk_drv.ko*' 2>/dev/null | grep -q . ||
  die "the testbed's 6.12 kernel has no ublk_drv module (under $cache/kernels)"

[[ -n $work ]] || work=$(mktemp -d /tmp/datapath_vs_kernel.XXXXXX)
mkdir -p "$work"
echo "datapath_vs_kernel: work directory $work"
: >"$work/rows.txt"

# boot SIDE: one testbed boot for every scenario of SIDE whose rows are not
# in the work directory yet; all of SIDE's rows appended to rows.txt.
boot() {
  local side=$1 mp=on rc=0 n sc todo=() dir
  [[ $side == datapath ]] && mp=off
  for sc in $scenarios; do
    cat "$work/$side"-*/rows.txt 2>/dev/null | grep -q "^$side $sc " || todo+=("$sc")
  done
  if ((${#todo[@]})); then
    dir=$work/$side-$(IFS=+; echo "${todo[*]}")
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "datapath_vs_kernel: $side: ${todo[*]} ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
    # shellcheck disable=SC2086 # dp_args is a list of flags
    flock /tmp/pathwise-testbed.lock "$testbed" run --kernel 6.12 --topology tcp:2 \
      --multipath "$mp" --timeout 1800 --quiet --out "$dir" \
      "$case_script" "$side" "$(IFS=,; echo "${todo[*]}")" "$runtime" "$numjobs" "$iodepth" \
      "$bin" "$perf" "$variants" "$base_delay" "${variant_scenarios// /,}" "$cb_rates" "$rounds" \
      "$read_pct" $dp_args || rc=$?
    if ((rc != 0)); then
      tail -20 "$dir/testbed-console.log" >&2 2>/dev/null
      die "$side: testbed run exited $rc (logs in $dir)"
    fi
  fi
  for sc in $scenarios; do
    n=$(cat "$work/$side"-*/rows.txt 2>/dev/null | grep -c "^$side $sc " || true)
    ((n >= 3)) || die "$side $sc: $n result rows, want 3 (logs in $work)"
  done
}

for side in $sides; do boot "$side"; done
for sc in $scenarios; do
  for side in $sides; do
    cat "$work/$side"-*/rows.txt | grep "^$side $sc " >>"$work/rows.txt"
  done
done
if ((perf)); then
  for f in "$work"/datapath-*/perf-report.txt; do
    [[ -f $f ]] && cp "$f" "${out%.txt}.perf.txt"
  done
fi

# The lab's prediction: the same two paths, workload and fault schedule,
# each path a pure round trip equal to the mean completion latency the
# kernel's round-robin measured on symmetric paths (latency-bound model;
# see the notes written below).
calib=$(awk '$1 == "kernel" && $2 == "symmetric" && $3 ~ /^round-robin(\/r[0-9]+)?$/ { n++; l += $6 }
  END { if (n) printf "%.0f", l / n }' "$work/rows.txt")
# The latency-bound pair's paths: the kernel round-robin's mean on
# lb-symmetric (the base delay and the per-I/O time in that regime).
calib_lb=$(awk '$1 == "kernel" && $2 == "lb-symmetric" && $3 ~ /^round-robin(\/r[0-9]+)?$/ { n++; l += $6 }
  END { if (n) printf "%.0f", l / n }' "$work/rows.txt")
# The datapath's own cost per I/O, measured on the pair's symmetric
# scenario (symmetric, lb-symmetric) and carried to the pair's others: CPU
# (the server process's user + system time per I/O, on its --queues
# threads, one I/O at a time each) and a delay that takes no CPU (its mean
# completion latency over the kernel round-robin's, less that CPU: the
# ublk round trip and the wake-ups). Means over the datapath's policies.
dp_queues=$(sed -n 's/.*--queues[ =]\([0-9]*\).*/\1/p' <<<"$dp_args")
dp_cost() { # calibration scenario -> "cpu_us host_latency_us" or nothing
  # Every round counts (rows POLICY/rN), other variants do not.
  awk -v s="$1" '{ p = $3; sub(/\/r[0-9]+$/, "", p) }
    $2 == s && $1 == "kernel" && p == "round-robin" { nk++; k += $6 }
    $2 == s && $1 == "datapath" && p !~ /[\/+]/ { n++; lat += $6; cpu += $9 + $10 }
    END { if (n && nk) { c = cpu / n; h = lat / n - k / nk - c; if (h < 0) h = 0; printf "%.0f %.0f", c, h } }' "$work/rows.txt"
}
read -r dp_cpu dp_lat <<<"$(dp_cost symmetric)"
read -r dp_cpu_lb dp_lat_lb <<<"$(dp_cost lb-symmetric)"
# The capacity-bound case's paths: the same per-I/O costs as the
# latency-bound pair in the same boot (a similar rate of I/O, against the
# CPU-bound pair's 3-5x more), the round trip the kernel's lb-symmetric
# mean less the base delay, and each link's bytes per second at 4k a read:
# netem's rate counts frames with their headers, so a link carries
# rate x 4096 / (the target's bytes sent per read, measured over the
# kernel's cb-asym runs).
calib_cb="" wire_cb=""
[[ -n $calib_lb ]] && calib_cb=$(awk -v l="$calib_lb" -v b="$base_delay" 'BEGIN { x = l - b * 1000; if (x > 0) printf "%.0f", x }')
# With writes in the mix (--read-pct) the target's ends also sent their
# completions: they are counted in the reads' bytes, as they take the same
# shaped link.
wire_cb=$(awk -v rp="$read_pct" 'rp > 0 && $2 == "cb-asym" && $1 == "kernel" && NF >= 12 { n++; w += $12 * 100 / rp } END { if (n && rp > 0) printf "%.0f", w / n }' "$work/rows.txt")
cb_bw() { # path index -> bytes/s of 4k reads
  local r
  r=$(cut -d, -f$(($1 + 1)) <<<"$cb_rates")
  awk -v r="$r" -v w="$wire_cb" 'BEGIN { if (w > 0) printf "%.0f", r * 1e6 / 8 * 4096 / w }'
}
lab_csv() { # scenario [datapath] -> csv of pathwise lab
  local sc=$1 dp=${2:-} f=$work/lab-$1${2:+-$2}.scn lat=$calib cpu=$dp_cpu host=$dp_lat
  [[ $sc == lb-* ]] && lat=$calib_lb cpu=$dp_cpu_lb host=$dp_lat_lb
  [[ $sc == cb-* ]] && lat=$calib_cb cpu=$dp_cpu_lb host=$dp_lat_lb
  [[ $sc == cb-* && -z $wire_cb ]] && return 0
  [[ -n $lat ]] || return 0
  [[ -z $dp || -n $cpu ]] || return 0
  {
    printf '[scenario]\nname = testbed-%s\nduration = %ss\nseed = 1\n' "$sc" "$runtime"
    if [[ -n $dp ]]; then
      printf '[workload]\nnumjobs = %s\niodepth = %s\nbs = 4k\nread = %s%%\ncpus = %s\n' \
        "$numjobs" "$iodepth" "$read_pct" "${dp_queues:-1}"
      printf 'cpu_per_io = %sus\nhost_latency = %sus\n' "$cpu" "$host"
    else
      printf '[workload]\nnumjobs = %s\niodepth = %s\nbs = 4k\nread = %s%%\ncpus = 2\n' "$numjobs" "$iodepth" "$read_pct"
    fi
    for i in 0 1; do
      printf '[path p%s]\nlatency = %sus\nnuma_node = 0\n' "$i" "$lat"
      # netem's rate on the target's end: only what the target sends.
      [[ $sc == cb-* ]] && printf 'read_bandwidth = %sB/s\n' "$(cb_bw "$i")"
    done
    printf '[events]\n'
    case $sc in
      delay30 | lb-delay30) echo "0s p0 delay 30ms" ;;
      lossy) awk -v r="$runtime" 'BEGIN { q = r / 4 * 1000
        printf "0ms p0 loss 5%%\n%dms p0 loss 0%%\n%dms p0 loss 3%%\n%dms p0 loss 0%%\n", q, 2 * q, 3 * q }' ;;
      down) awk -v r="$runtime" 'BEGIN { printf "%dms p0 down\n%dms p0 up\n", r * 250, r * 600 }' ;;
    esac
  } >"$f"
  "$bin" lab --scenario "$f" --policies numa,round-robin,queue-depth,pathwise --format csv
}
if [[ -x $bin ]]; then
  for sc in $scenarios; do
    lab_csv "$sc" >"$work/lab-$sc.csv" || die "pathwise lab failed on $work/lab-$sc.scn"
    lab_csv "$sc" datapath >"$work/lab-$sc-datapath.csv" ||
      die "pathwise lab failed on $work/lab-$sc-datapath.scn"
  done
fi
lab_mib() { # csv-name policy -> MiB/s or "-"
  [[ -s $work/lab-$1.csv ]] || { echo "-"; return; }
  awk -F, -v p="$2" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "policy") pc = i; if ($i == "mib_s") mc = i; if ($i == "op") oc = i } next }
    $pc == p && ($oc == "read" || $oc == "write") { m += $mc; found = 1 } END { if (found) printf "%.2f", m; else printf "-" }' "$work/lab-$1.csv"
}

{
  echo "# datapath_vs_kernel: the kernel's NVMe multipath vs pathwise datapath (bench/datapath_vs_kernel.sh)"
  [[ -n $label ]] && echo "# run: $label"
  echo "# pathwise: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- datapath nvme policy || echo ' (+ uncommitted changes)'), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# guest: $(grep -h 'datapath_vs_kernel: ' "$work"/*/testbed-console.log 2>/dev/null | grep -o '[0-9.]*+deb12-amd64' | head -1) (testbed, QEMU TCG ${TB_TCG_THREAD:-single}-threaded, 2 vCPUs${TB_KERNEL_ARGS:+, guest kernel args: $TB_KERNEL_ARGS}, tcp:2 over veth to nvmet null_blk)"
  echo "# fio: $( ((read_pct == 100)) && echo --rw=randread || echo "--rw=randrw --rwmixread=$read_pct (rows: reads and writes)") --bs=4k --numjobs=$numjobs --iodepth=$iodepth (${numjobs}x${iodepth} = $((numjobs * iodepth)) outstanding) --ioengine=io_uring --direct=1 --runtime=${runtime}s, one run per policy"
  echo "# datapath: pathwise datapath --namespace auto --policy P $dp_args"
  [[ -n $variants ]] && echo "# variants (rows POLICY/NAME, same boot as the datapath's, on $variant_scenarios): $variants"
  echo "# lab: two paths, each a ${calib:-?} us round trip (the kernel's round-robin mean on symmetric paths), same workload and fault schedule"
  [[ " $scenarios " == *" lb-"* ]] &&
    echo "# lb-*: latency-bound pair, netem +${base_delay} ms on both paths (lb-delay30: path 0 +$((base_delay + 30)) ms); lab paths ${calib_lb:-?} us (the kernel's round-robin mean on lb-symmetric, over its rounds)"
  [[ " $scenarios " == *" cb-"* ]] &&
    echo "# cb-asym: capacity-bound, read data of path 0 / path 1 at ${cb_rates/,/ \/ } Mbit/s (netem rate); lab paths ${calib_cb:-?} us round trip (lb-symmetric's less the base delay), target->host links (read_bandwidth; writes' data unshaped) $(cb_bw 0) / $(cb_bw 1) B/s of 4k reads (${wire_cb:-?} wire bytes per read, the kernel's runs), the datapath's cost from lb-symmetric"
  echo "# x rr: MiB/s over the kernel's round-robin in the same scenario; cpu/io: guest busy CPU us per I/O; srv usr/sys: the datapath process's us per I/O"
  echo "# lab dp: the lab with the datapath's cost per I/O (cpu_per_io on ${dp_queues:-1} CPU, host_latency): ${dp_cpu:-?} + ${dp_lat:-?} us from symmetric, ${dp_cpu_lb:-?} + ${dp_lat_lb:-?} us from lb-symmetric (calibration: those two scenarios' own rows are fitted, the others predicted); err: measured / lab dp - 1"
  printf '%-12s %-9s %-14s %8s %7s %8s %9s %9s %8s %8s %8s | %8s %7s | %7s %6s\n' \
    scenario side policy MiB/s "x rr" clat_us p99_us cpu/io "srv usr" "srv sys" IOPS lab_MiB/s "lab x" "lab dp" err
  while read -r side sc pol iops mib mean p99 cpu su ss _; do
    rr=$(awk -v s="$sc" '$1 == "kernel" && $2 == s && $3 == "round-robin" { print $5 }' "$work/rows.txt")
    lpol=${pol%+perf}
    lpol=${lpol%%/*}
    lab=$(lab_mib "$sc" "$lpol")
    labrr=$(lab_mib "$sc" round-robin)
    dp="-" err="-"
    if [[ $side == datapath && $pol != */* ]]; then
      dp=$(lab_mib "$sc-datapath" "$lpol")
      err=$(awk -v a="$mib" -v b="$dp" 'BEGIN { if (b > 0) printf "%+.0f%%", (a / b - 1) * 100; else printf "-" }')
    fi
    printf '%-12s %-9s %-14s %8s %7s %8s %9s %9s %8s %8s %8s | %8s %7s | %7s %6s\n' "$sc" "$side" "$pol" "$mib" \
      "$(awk -v a="$mib" -v b="$rr" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }')" \
      "$mean" "$p99" "$cpu" "$su" "$ss" "$iops" "$lab" \
      "$(awk -v a="$lab" -v b="$labrr" 'BEGIN { if (b > 0 && a != "-") printf "%.2f", a / b; else printf "-" }')" \
      "$dp" "$err"
  done <"$work/rows.txt"
  # Every comparison over its rounds (rows POLICY and POLICY/rN): mean and
  # range; the datapath's pathwise against the kernel's best policy there
  # (queue-depth where one path is slower, round-robin on symmetric
  # paths), the range from the worst pairing to the best.
  echo
  echo "## rounds: MiB/s, mean (min-max, rounds); the datapath's lab dp and the mean's error against it"
  for sc in $scenarios; do
    awk -v s="$sc" -v l_rr="$(lab_mib "$sc-datapath" round-robin)" \
      -v l_qd="$(lab_mib "$sc-datapath" queue-depth)" -v l_pw="$(lab_mib "$sc-datapath" pathwise)" '
      BEGIN { lab["round-robin"] = l_rr; lab["queue-depth"] = l_qd; lab["pathwise"] = l_pw }
      $2 == s {
        pol = $3; if (pol ~ /\/r[0-9]+$/) sub(/\/r[0-9]+$/, "", pol); else if (pol ~ /[\/+]/) next
        k = $1 " " pol; if (!(k in n)) { order[++m] = k; lo[k] = $5; hi[k] = $5 }
        n[k]++; sum[k] += $5; if ($5 < lo[k]) lo[k] = $5; if ($5 > hi[k]) hi[k] = $5 }
      END {
        for (i = 1; i <= m; i++) { k = order[i]; split(k, f, " ")
          printf "%-12s %-9s %-12s %6.2f (%.2f-%.2f, %d)", s, f[1], f[2], sum[k] / n[k], lo[k], hi[k], n[k]
          if (f[1] == "datapath" && lab[f[2]] > 0)
            printf "   lab dp %.2f, %+.0f%%", lab[f[2]], (sum[k] / n[k] / lab[f[2]] - 1) * 100
          printf "\n" }
        ref = (s ~ /symmetric/) ? "round-robin" : "queue-depth"
        d = "datapath pathwise"; r = "kernel " ref
        if ((d in n) && (r in n) && lo[r] > 0)
          printf "%-12s datapath pathwise / kernel %s: %.2fx (%.2f-%.2f)\n", s, ref,
            (sum[d] / n[d]) / (sum[r] / n[r]), lo[d] / hi[r], hi[d] / lo[r] }' "$work/rows.txt"
  done
  # Hand-written notes below the table survive a rerun.
  if [[ -f $out ]] && grep -q '^## notes' "$out"; then
    echo
    sed -n '/^## notes/,$p' "$out"
  fi
} >"$out.new"
mv "$out.new" "$out"
cat "$out"
echo "datapath_vs_kernel: wrote $out (raw runs in $work)"
