#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `pathwise top` on real eBPF histograms (label bpf): `serve --bpf=required
# --devices=all` while fio reads a fresh loop device, then
#   1. `top --format=json`: the loop device's read IOPS within 40% of what
#      /sys/block/loopX/stat counted around it (top's window is the one
#      between two of the agent's collections, inside the sysfs one, and
#      fio's rate limiter catches up in bursts: 40% still catches a wrong
#      interval or unit), p50 <= p99, both from the window's histogram;
#   2. `top --once --view=devices`: its row with IOPS and p99;
#   3. the live view in tmux (80x24, TERM=xterm): `d` shows the device
#      with numbers, `q` exits 0.
# ~15 s. Needs root, losetup, fio, curl, jq, tmux. Fails (never skips) when
# something is missing.
#   top_host_test.sh PATHWISE_BINARY
set -u
PW=${1:?usage: top_host_test.sh PATHWISE_BINARY}
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root"
for t in losetup fio curl jq tmux python3; do
  command -v "$t" >/dev/null || die "$t is missing"
done

tmp=$(mktemp -d /tmp/pathwise-top-bpf.XXXXXX)
loop="" pid="" fio_pid="" sock="pathwise-top-bpf-$$"
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null
  [[ -n $fio_pid ]] && kill "$fio_pid" 2>/dev/null && wait "$fio_pid" 2>/dev/null
  [[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [[ -n $loop ]] && losetup -d "$loop"
  rm -rf "$tmp"
}
trap cleanup EXIT

truncate -s 64M "$tmp/backing"
loop=$(losetup --find --show --direct-io=on "$tmp/backing" 2>/dev/null) ||
  loop=$(losetup --find --show "$tmp/backing") || die "losetup failed"
dev=$(basename "$loop")

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$PW" serve --web.listen-address="127.0.0.1:$port" --interval=500ms --bpf=required \
  --devices=all 2>"$tmp/serve.err" &
pid=$!
url=http://127.0.0.1:$port
for _ in $(seq 1 100); do
  curl -fs "$url/healthz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || die "serve exited: $(cat "$tmp/serve.err")"
  sleep 0.1
done
curl -fs "$url/healthz" >/dev/null || die "serve not healthy: $(cat "$tmp/serve.err")"

# Steady reads for the whole test (rate-limited so that the count per
# interval is stable).
fio --name=top --filename="$loop" --rw=randread --bs=4k --direct=1 \
  --ioengine=psync --rate_iops=2000 --time_based --runtime=60 \
  --output=/dev/null 2>"$tmp/fio.err" &
fio_pid=$!
sleep 2

reads() { awk '{ print $1 }' "/sys/block/$dev/stat"; }
r0=$(reads) t0=$(date +%s.%N)
"$PW" top --format=json --url="$url" --interval=2s --filter="$dev" >"$tmp/top.json" 2>"$tmp/top.err" ||
  fail "top --format=json: $(cat "$tmp/top.err")"
r1=$(reads) t1=$(date +%s.%N)
want=$(awk -v a="$r0" -v b="$r1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f", (b - a) / (t1 - t0) }')
if jq -e --arg d "$dev" --argjson want "$want" '
     [.devices[] | select(.name == $d)] as $m | ($m | length == 1) and
     ($m[0].read.iops - $want | fabs) <= 0.4 * $want and
     $m[0].read.p50_seconds > 0 and
     $m[0].read.p50_seconds <= $m[0].read.p99_seconds and
     .interval_seconds > 0 and .io_source == "bpf"' "$tmp/top.json" >/dev/null; then
  ok "json: $dev $(jq -c --arg d "$dev" '.devices[] | select(.name == $d) | .read | {iops, p50_seconds, p99_seconds}' "$tmp/top.json") (sysfs: $want/s)"
else
  fail "json (sysfs $want/s):"; cat "$tmp/top.json" >&2
fi

"$PW" top --once --url="$url" --interval=1s --view=devices --filter="$dev" >"$tmp/once.txt" 2>&1
if grep -qE "^$dev +[0-9]{3,} +[0-9.]+ +[0-9.]+(us|ms) +[0-9.]+(us|ms) " "$tmp/once.txt"; then
  ok "--once --view=devices: $(grep "^$dev" "$tmp/once.txt")"
else
  fail "--once --view=devices:"; cat "$tmp/once.txt" >&2
fi

tm() { tmux -L "$sock" "$@"; }
tm -f /dev/null new-session -d -s top -x 80 -y 24 \
  "TERM=xterm '$PW' top --url='$url' --interval=500ms --filter='$dev' 2>'$tmp/live.err'; echo \$? >'$tmp/live.rc'; sleep 30" ||
  die "tmux failed"
sleep 1
tm send-keys -t top d
seen=""
for _ in $(seq 1 50); do
  tm capture-pane -p -t top >"$tmp/screen"
  grep -qE "^$dev +[0-9]{3,} " "$tmp/screen" && { seen=1; break; }
  sleep 0.1
done
[[ -n $seen ]] && ok "live: d shows $(grep "^$dev" "$tmp/screen")" || { fail "live devices view:"; cat "$tmp/screen" >&2; }
tm send-keys -t top q
for _ in $(seq 1 50); do [[ -s $tmp/live.rc ]] && break; sleep 0.1; done
[[ $(cat "$tmp/live.rc" 2>/dev/null) == 0 ]] && ok "live: q exits 0" ||
  fail "live: rc=$(cat "$tmp/live.rc" 2>/dev/null) $(cat "$tmp/live.err")"

if ((fails)); then
  echo "$fails check(s) failed" >&2
  exit 1
fi
echo "all top bpf checks passed"
