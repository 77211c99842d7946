#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent with the eBPF sampler on this host's real kernel (label bpf):
#   1. `pathwise serve --bpf=required --devices=all` around exactly N direct
#      4 KiB reads and N writes on a fresh loop device: the exported
#      pathwise_device_io_* deltas equal N, bytes N*4096, the histogram count
#      equals the completed count, and both agree with /sys/block/loopX/stat.
#      promtool accepts the exposition; SIGTERM exits 0 and detaches every
#      program the agent loaded.
#   2. Without BPF privileges: --bpf=required exits 1 with the reason on one
#      line; --bpf=auto falls back to sysfs with exactly one log line.
# Needs root, losetup, fio, curl, promtool, setpriv, bpftool. Fails (never
# skips) when something is missing.
# Usage: agent_host_test.sh PATHWISE_BINARY
set -u
PW=${1:?usage: agent_host_test.sh PATHWISE_BINARY}
N=${PATHWISE_TEST_N:-2000}
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || die "needs root (loads BPF programs, creates loop devices)"
for t in losetup fio curl promtool setpriv bpftool; do
  command -v "$t" >/dev/null || die "$t is missing"
done

tmp=$(mktemp -d /tmp/pathwise-agent-bpf.XXXXXX)
loop="" pid=""
tr_root=/sys/kernel/tracing tr_inst="" tr_mounted=""
cleanup() {
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [[ -n $loop ]] && losetup -d "$loop"
  if [[ -n $tr_inst ]]; then
    echo 0 >"$tr_inst/events/block/block_rq_complete/enable"
    rmdir "$tr_inst"
  fi
  [[ -n $tr_mounted ]] && umount "$tr_root"
  rm -rf "$tmp"
}
trap cleanup EXIT

truncate -s 64M "$tmp/backing"
loop=$(losetup --find --show --direct-io=on "$tmp/backing" 2>/dev/null) ||
  loop=$(losetup --find --show "$tmp/backing") || die "losetup failed"
dev=$(basename "$loop")
echo 2 >"/sys/block/$dev/queue/nomerges"
command -v udevadm >/dev/null && udevadm settle --timeout=10
sleep 1

# --- 1. exact counts through the agent.
port=""
for _ in $(seq 1 20); do
  p=$((20000 + RANDOM % 40000))
  "$PW" serve --web.listen-address="127.0.0.1:$p" --interval=200ms --bpf=required \
    --devices=all --bpf-stats 2>"$tmp/serve.err" &
  pid=$!
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && { port=$p; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n $port ]] && break
  if grep -q "already in use" "$tmp/serve.err"; then pid=""; continue; fi
  cat "$tmp/serve.err" >&2
  die "pathwise serve --bpf=required did not become healthy"
done
[[ -n $port ]] || die "no free port"
grep -q "eBPF sampler attached" "$tmp/serve.err" && ok "sampler attached: $(grep -o 'eBPF sampler attached.*' "$tmp/serve.err")" ||
  fail "no 'eBPF sampler attached' log line"

scrape() { curl -fs "http://127.0.0.1:$port/metrics"; }
# value NAME LABELS-REGEX FILE -> the sample value (0 when absent)
value() {
  awk -v n="$1" -v l="$2" '
    index($0, n "{") == 1 && $0 ~ l { v = $NF } END { print (v == "" ? 0 : v) }' "$3"
}
stat_field() { awk -v f="$1" '{ print $f }' "/sys/block/$dev/stat"; }

# A witness of the device's completions with the tgid each ran on: kernels
# with init isolation (pathwise_bpf_init_context_blind 1) never run the
# programs for completions handled on a thread of PID 1; see bpf/README.md.
if [[ ! -d $tr_root/instances ]]; then
  mount -t tracefs nodev "$tr_root" || die "cannot mount tracefs"
  tr_mounted=1
fi
tr_inst=$tr_root/instances/pathwise-agent-test-$$
mkdir "$tr_inst" || die "cannot create a tracefs instance"
kdev=$(( $(stat -c '0x%t' "$loop") << 20 | $(stat -c '0x%T' "$loop") ))
echo 1 >"$tr_inst/options/record-tgid" &&
  echo 2048 >"$tr_inst/buffer_size_kb" &&
  echo "dev == $kdev" >"$tr_inst/events/block/block_rq_complete/filter" &&
  echo 1 >"$tr_inst/events/block/block_rq_complete/enable" ||
  die "cannot set up the tracefs witness"

sleep 0.5
scrape >"$tmp/before.prom" || die "scrape failed"
r0=$(stat_field 1) rs0=$(stat_field 3) w0=$(stat_field 5) ws0=$(stat_field 7)
for rw in randread randwrite; do
  fio --name=pathwise-agent --filename="$loop" --rw=$rw --bs=4k --direct=1 \
    --ioengine=psync --size=64M --io_size=$((N * 4096)) --randrepeat=1 \
    --output-format=terse >"$tmp/fio.$rw" 2>&1 || { cat "$tmp/fio.$rw" >&2; die "fio $rw failed"; }
done
r1=$(stat_field 1) rs1=$(stat_field 3) w1=$(stat_field 5) ws1=$(stat_field 7)
sleep 1  # > 2 intervals
scrape >"$tmp/after.prom" || die "scrape failed"
echo 0 >"$tr_inst/tracing_on"
cp "$tr_inst/trace" "$tmp/witness"
# in_init OP-LETTER: completions of that op that ran on a thread of PID 1.
in_init() {
  awk -v op="$1" '/block_rq_complete:/ && $0 ~ /\( *1\) / {
      for (i = 1; i <= NF; i++) if ($i == "block_rq_complete:") { f = $(i + 2) }
      if (index(f, op) == 1) n++ } END { print n + 0 }' "$tmp/witness"
}
traced=$(grep -c 'block_rq_complete:' "$tmp/witness")
[[ $traced == $((2 * N)) ]] && ok "the tracefs witness saw $traced completions" ||
  fail "the tracefs witness saw $traced completions, not $((2 * N))"
blind=$(awk '$1 == "pathwise_bpf_init_context_blind" { print $2 }' "$tmp/after.prom")
[[ -n $blind ]] || fail "no pathwise_bpf_init_context_blind"

if promtool check metrics <"$tmp/after.prom" >"$tmp/promtool.out" 2>&1; then
  ok "promtool check metrics"
else
  fail "promtool:"; cat "$tmp/promtool.out" >&2
fi
grep -qx 'pathwise_sampler_info{source="bpf"} 1' "$tmp/after.prom" &&
  ok 'pathwise_sampler_info{source="bpf"}' || fail "sampler_info is not bpf"

for op in read write; do
  L="device=\"$dev\",op=\"$op\""
  c0=$(value pathwise_device_io_completed_total "$L" "$tmp/before.prom")
  c1=$(value pathwise_device_io_completed_total "$L" "$tmp/after.prom")
  b0=$(value pathwise_device_io_bytes_total "$L" "$tmp/before.prom")
  b1=$(value pathwise_device_io_bytes_total "$L" "$tmp/after.prom")
  h1=$(value pathwise_device_io_latency_seconds_count "$L" "$tmp/after.prom")
  inf1=$(value pathwise_device_io_latency_seconds_bucket "$L,le=\"\\+Inf\"" "$tmp/after.prom")
  dc=$((c1 - c0)) db=$((b1 - b0))
  if [[ $op == read ]]; then sc=$((r1 - r0)) sb=$(((rs1 - rs0) * 512)); else sc=$((w1 - w0)) sb=$(((ws1 - ws0) * 512)); fi
  hidden=0
  if [[ $blind == 1 ]]; then
    hidden=$(in_init "$([[ $op == read ]] && echo R || echo W)")
    ((hidden > 0)) && echo "note: the kernel hid $hidden $op completions (ran on PID 1's threads)"
  fi
  sc=$((sc - hidden)) sb=$((sb - hidden * 4096))
  [[ $dc == $((N - hidden)) ]] && ok "$op completed delta = $dc = N - hidden" || fail "$op completed delta $dc != N=$N - hidden $hidden"
  [[ $db == $(((N - hidden) * 4096)) ]] && ok "$op bytes delta = $db" || fail "$op bytes delta $db != $(((N - hidden) * 4096))"
  [[ $h1 == "$c1" && $inf1 == "$c1" ]] && ok "$op histogram count $h1 = +Inf bucket = completed" ||
    fail "$op histogram count $h1 / +Inf $inf1 != completed $c1"
  [[ $dc == "$sc" && $db == "$sb" ]] && ok "$op agrees with /sys/block/$dev/stat ($sc, $sb bytes)" ||
    fail "$op: pathwise $dc/$db vs sysfs $sc/$sb"
done
runs=$(awk '/^pathwise_bpf_program_runs_total\{program="pw_done_btf"\}|^pathwise_bpf_program_runs_total\{program="pw_done_raw"\}/ { print $NF }' "$tmp/after.prom")
[[ -n $runs ]] && awk -v r="$runs" 'BEGIN { exit !(r >= 2 * '"$N"') }' &&
  ok "--bpf-stats: completion program runs = $runs" || fail "--bpf-stats: no program runs ($runs)"

# Programs and maps this agent holds (its fds' fdinfo), gone after SIGTERM.
ids=$(cat /proc/"$pid"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -u)
map_ids=$(cat /proc/"$pid"/fdinfo/* 2>/dev/null | awk '$1 == "map_id:" { print $2 }' | sort -u)
[[ -n $ids && -n $map_ids ]] && ok "agent holds programs $(echo $ids), maps $(echo $map_ids)" ||
  fail "no BPF programs/maps in the fds of pid $pid"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
pid=""
[[ $rc == 0 ]] && ok "SIGTERM -> exit 0" || fail "SIGTERM -> exit $rc"
left=""
sleep 0.5  # map release is deferred in the kernel
for id in $ids; do bpftool prog show id "$id" >/dev/null 2>&1 && left+=" prog $id"; done
for id in $map_ids; do bpftool map show id "$id" >/dev/null 2>&1 && left+=" map $id"; done
[[ -z $left ]] && ok "all programs and maps released" || fail "left after exit:$left"

# --- 2. BPF unusable: no capabilities.
nocaps=(setpriv --inh-caps=-all --bounding-set=-all)
rc=0
"${nocaps[@]}" "$PW" snapshot --duration=0s --bpf=required >"$tmp/req.out" 2>"$tmp/req.err" || rc=$?
if [[ $rc == 1 && $(wc -l <"$tmp/req.err") == 1 ]] &&
   grep -q "^pathwise: --bpf=required: eBPF sampler unavailable: .*permission denied" "$tmp/req.err"; then
  ok "--bpf=required without CAP_BPF -> rc 1: $(cat "$tmp/req.err")"
else
  fail "--bpf=required without CAP_BPF -> rc $rc:"; cat "$tmp/req.err" >&2
fi
rc=0
"${nocaps[@]}" "$PW" snapshot --duration=0s --bpf=auto >"$tmp/auto.out" 2>"$tmp/auto.err" || rc=$?
# One line about the fallback; this host has no NVMe, so the empty-host
# notice (its own line, said once) may stand beside it.
if [[ $rc == 0 && $(grep -vc "no NVMe multipath subsystems" "$tmp/auto.err") == 1 ]] &&
   grep -q "eBPF sampler unavailable, using sysfs I/O counters: " "$tmp/auto.err" &&
   grep -qx 'pathwise_sampler_info{source="sysfs"} 1' "$tmp/auto.out"; then
  ok "--bpf=auto without CAP_BPF -> sysfs, one line: $(grep -v "no NVMe multipath" "$tmp/auto.err")"
else
  fail "--bpf=auto without CAP_BPF -> rc $rc:"; cat "$tmp/auto.err" >&2
fi

[[ $fails == 0 ]] && echo "all checks passed" || echo "$fails check(s) failed"
exit $((fails > 0))
