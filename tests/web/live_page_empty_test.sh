#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A host without NVMe multipath (label unit_root: --path.sysfs binds the
# tree over /sys, which needs root). Two trees: an empty one (no
# /sys/class/nvme-subsystem: nvme_core not loaded) and one whose class is
# there but empty. For each, an agent on it must
#   - answer /healthz 200 (collection works) with the notice in the body;
#   - export pathwise_subsystems 0 and pathwise_multipath_subsystems 0;
#   - log the notice once, at the start, not once per interval;
#   - show it on the live page as a neutral banner (live-page-empty.mjs,
#     Debian's chromium through puppeteer-core).
#   live_page_empty_test.sh PATHWISE NODE_WORKDIR SCREENSHOT_PREFIX
set -uo pipefail
PW=$1
WORK=$2
SHOT=$3
here=$(dirname "$(readlink -f "$0")")
die() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (--path.sysfs)"
for t in curl python3 node npm; do
  command -v "$t" >/dev/null || die "$t is missing (scripts/setup-deps)"
done
[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || die "chromium is missing (scripts/setup-deps)"

tmp=$(mktemp -d /tmp/pathwise-live-empty.XXXXXX)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
want='no NVMe multipath subsystems: is nvme_core loaded with multipath=Y?'
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# check NAME ROOT FOUND: one agent on ROOT; FOUND is what the notice must
# say was found.
check() {
  local name=$1 root=$2 found=$3 port="" p
  for _ in $(seq 1 10); do
    p=$(free_port)
    "$PW" serve --web.listen-address="127.0.0.1:$p" --interval=200ms --bpf=off \
      --path.sysfs="$root" 2>"$tmp/$name.err" &
    pid=$!
    for _ in $(seq 1 50); do
      curl -fs "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && { port=$p; break; }
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    [[ -n $port ]] && break
  done
  [[ -n $port ]] || die "$name: serve did not come up: $(cat "$tmp/$name.err")"
  local base=http://127.0.0.1:$port
  local code body
  code=$(curl -s -o "$tmp/healthz" -w '%{http_code}' "$base/healthz")
  body=$(cat "$tmp/healthz")
  [[ $code == 200 ]] || die "$name: /healthz HTTP $code, want 200: $body"
  [[ $(head -1 "$tmp/healthz") == ok ]] || die "$name: /healthz first line: $body"
  grep -qF "$want ($found" "$tmp/healthz" || die "$name: /healthz body lacks the notice: $body"
  echo "ok: $name: /healthz 200, says: $(sed -n 2p "$tmp/healthz")"
  curl -fs "$base/metrics" >"$tmp/metrics" || die "$name: /metrics failed"
  grep -qx 'pathwise_subsystems 0' "$tmp/metrics" || die "$name: no pathwise_subsystems 0: $(grep subsystems "$tmp/metrics")"
  grep -qx 'pathwise_multipath_subsystems 0' "$tmp/metrics" || die "$name: no pathwise_multipath_subsystems 0"
  echo "ok: $name: pathwise_subsystems 0, pathwise_multipath_subsystems 0"
  "$here/node-run.sh" "$WORK" live-page-empty.mjs "$base/" "$found" "$SHOT-$name.png" ||
    die "$name: live page"
  # By now more than ten intervals have passed: still one log line.
  local n
  n=$(grep -cF "$want" "$tmp/$name.err")
  [[ $n == 1 ]] || die "$name: the notice was logged $n times, want once: $(cat "$tmp/$name.err")"
  echo "ok: $name: logged once: $(grep -F "$want" "$tmp/$name.err")"
  kill "$pid" && wait "$pid" 2>/dev/null
  pid=""
}

mkdir -p "$tmp/none" "$tmp/class/class/nvme-subsystem"
check no-class "$tmp/none" "no /sys/class/nvme-subsystem"
check empty-class "$tmp/class" "/sys/class/nvme-subsystem is empty"
echo "all empty-host checks passed"
