#!/usr/bin/env bash
# The live page at / in a real browser (label unit_root: the agent binds a
# captured sysfs tree over /sys, which needs root). An agent serves the
# tcp2-6.12 fixture (a copy, whose two paths' block stat files a writer
# advances with the clock: nvme0c0n1 at 400 read + 100 write IOPS of
# 1-2 ms, nvme0c1n1 at 200 + 50 of 10-20 ms, so scoring marks it degraded)
# behind --web.config.file basic auth; live-page.mjs drives Debian's
# chromium through puppeteer-core against it and saves a screenshot.
# ~20 s (npm ci the first time). Needs root, chromium, node/npm, htpasswd,
# curl, python3.
#   live_page_test.sh PATHWISE FIXTURES_DIR NODE_WORKDIR SCREENSHOT
set -uo pipefail
PW=$1
FIX=$2
WORK=$3
SHOT=$4
here=$(dirname "$(readlink -f "$0")")
die() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (--sysfs_root)"
for t in htpasswd curl python3 node npm; do
  command -v "$t" >/dev/null || die "$t is missing (scripts/setup-deps)"
done
[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || die "chromium is missing (scripts/setup-deps)"

tmp=$(mktemp -d /tmp/pathwise-live.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

cp -a "$FIX/tcp2-6.12/sys" "$tmp/sys" || die "fixture copy failed"
ctl=$tmp/sys/devices/virtual/nvme-fabrics/ctl
# writer: sets each path's stat (reads, read ms, writes, write ms) from the
# time elapsed since it started, about 10 times a second, atomically
# (rename), so the agent never reads half a file and the rates hold however
# slowly a loaded host runs the loop.
(
  stat() { # FILE READS READ_MS WRITES WRITE_MS
    printf '%8d 0 %8d %8d %8d 0 %8d %8d 0 %8d %8d 0 0 0 0 0 0\n' \
      "$2" $(($2 * 8)) "$3" "$4" $(($4 * 8)) "$5" $(($2 + $4)) $(($3 + $5)) >"$1.tmp"
    mv -f "$1.tmp" "$1"
  }
  start=${EPOCHREALTIME/./}
  while :; do
    ms=$(((${EPOCHREALTIME/./} - start) / 1000))
    # per second: 400 reads of 1 ms, 100 writes of 2 ms; 200 of 10 ms, 50 of 20 ms
    stat "$ctl/nvme0/nvme0c0n1/stat" $((ms * 400 / 1000)) $((ms * 400 / 1000)) \
      $((ms * 100 / 1000)) $((ms * 200 / 1000))
    stat "$ctl/nvme1/nvme0c1n1/stat" $((ms * 200 / 1000)) $((ms * 2000 / 1000)) \
      $((ms * 50 / 1000)) $((ms * 1000 / 1000))
    sleep 0.1
  done
) &
pids+=($!)

hash=$(htpasswd -nbBC 10 oncall 'n1ght' | cut -d: -f2-)
printf 'basic_auth_users:\n  oncall: %s\n' "'$hash'" >"$tmp/web.yml"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=""
for _ in $(seq 1 10); do
  p=$(free_port)
  "$PW" serve --listen_address="127.0.0.1:$p" --interval=500ms --bpf=off \
    --sysfs_root="$tmp/sys" --web.config.file="$tmp/web.yml" 2>"$tmp/serve.err" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 50); do
    curl -fs -u oncall:n1ght "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && { port=$p; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n $port ]] && break
done
[[ -n $port ]] || die "serve did not come up: $(cat "$tmp/serve.err")"
url=http://127.0.0.1:$port/
code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
[[ $code == 401 ]] || die "/ without credentials: HTTP $code, want 401"
echo "ok: / without credentials: 401"

"$here/node-run.sh" "$WORK" live-page.mjs "$url" oncall n1ght "$SHOT"
