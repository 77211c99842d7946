#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `pathwise top` end to end (label unit_root: the agent binds a captured
# sysfs tree over /sys, which needs root):
#   1. against an agent (`serve` on the tcp2-6.12 fixture): --once text at
#      any width, --format=json, the controllers view;
#   2. error lines: a bad --url, nothing listening, HTTP 404, an answer
#      that is not a pathwise snapshot, no terminal for the live view;
#   3. no agent at the default URL (a network namespace of its own): top
#      samples by itself and says so;
#   4. the live view (ncurses) in a real terminal: tmux at 120x30 with
#      TERM=xterm; keys s (sort), / (filter), c and p (views), a resize to
#      50x15 (SIGWINCH, KEY_RESIZE), q: exit 0. The screen is read back
#      with `tmux capture-pane` (tmux is the terminal emulator).
# About 10 s. Needs root, tmux, jq, python3, unshare, ip.
#   top_tty_test.sh PATHWISE FIXTURES_DIR
set -uo pipefail
PW=$1
FIX=$2
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (--path.sysfs)"
for t in tmux jq python3 unshare ip curl; do
  command -v "$t" >/dev/null || die "$t is missing (scripts/setup-deps)"
done
root=$FIX/tcp2-6.12/sys
[[ -d $root ]] || die "fixture $root missing"

tmp=$(mktemp -d /tmp/pathwise-top.XXXXXX)
pids=()
sock="pathwise-top-$$"
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# --- 1. an agent on the fixture.
port=""
for _ in $(seq 1 10); do
  p=$(free_port)
  "$PW" serve --web.listen-address="127.0.0.1:$p" --interval=200ms --bpf=off \
    --path.sysfs="$root" 2>"$tmp/serve.err" &
  pid=$!
  for _ in $(seq 1 50); do
    curl -fs "http://127.0.0.1:$p/healthz" >/dev/null 2>&1 && { port=$p; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  pids+=("$pid")
  [[ -n $port ]] && break
done
[[ -n $port ]] || die "serve did not come up: $(cat "$tmp/serve.err")"
url=http://127.0.0.1:$port

# A path without I/O is healthy, or idle once --idle-windows windows have
# passed (soon on a slow, loaded machine).
if "$PW" top --once --url="$url" --interval=300ms >"$tmp/once.txt" 2>"$tmp/once.err"; then
  if grep -q "^pathwise top  $url  interval 0\.[0-9]s  io sysfs  sort name  gen [0-9]*  " "$tmp/once.txt" &&
     grep -q '^nvme-subsys0  iopolicy numa  advice numa' "$tmp/once.txt" &&
     grep -q '^PATH  *HEALTH  *ANA  *R-IOPS' "$tmp/once.txt" &&
     grep -q '^nvme0n1 .* 2 paths' "$tmp/once.txt" &&
     grep -qE '^  nvme0c0n1 +(healthy|idle) +optimized .* nvme0 +tcp +10\.77\.0\.2:4420$' "$tmp/once.txt" &&
     grep -qE '^  nvme0c1n1 +(healthy|idle) +optimized .* nvme1 +tcp +10\.77\.1\.2:4420$' "$tmp/once.txt"; then
    ok "--once against the agent"
  else
    fail "--once output:"; cat "$tmp/once.txt" >&2
  fi
else
  fail "--once exited $?: $(cat "$tmp/once.err")"
fi

"$PW" top --once --url="$url" --interval=200ms --width=40 >"$tmp/narrow.txt" 2>&1
long=$(awk 'length($0) > 40' "$tmp/narrow.txt")
if [[ -z $long ]] && grep -q '^  nvme0c0n1 ' "$tmp/narrow.txt" && ! grep -q ADDRESS "$tmp/narrow.txt"; then
  ok "--width=40: every line fits, ADDRESS hidden"
else
  fail "--width=40:"; cat "$tmp/narrow.txt" >&2
fi

if "$PW" top --format=json --url="$url" --interval=200ms >"$tmp/top.json" 2>"$tmp/json.err" &&
   jq -e '(.paths | length == 2) and .interval_seconds > 0 and
          .paths[0].name == "nvme0c0n1" and
          (.paths[0].health == "healthy" or .paths[0].health == "idle") and
          .paths[0].read.iops == 0 and (.controllers | length == 2) and
          .source == "'"$url"'"' "$tmp/top.json" >/dev/null; then
  ok "--format=json"
else
  fail "--format=json: $(cat "$tmp/json.err")"; cat "$tmp/top.json" >&2
fi

"$PW" top --once --url="$url" --interval=200ms --view=controllers >"$tmp/ctrl.txt" 2>&1
grep -q '^CONTROLLER  *STATE' "$tmp/ctrl.txt" && grep -q '^nvme1  *live ' "$tmp/ctrl.txt" &&
  ok "--view=controllers" || { fail "--view=controllers"; cat "$tmp/ctrl.txt" >&2; }

# --- 2. error lines: exit status, one line on stderr, nothing on stdout.
expect_error() { # RC PATTERN ARGS...
  local want=$1 pat=$2 rc=0
  shift 2
  "$PW" top "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
  if [[ $rc == "$want" && $(wc -l <"$tmp/err") == 1 && ! -s $tmp/out ]] &&
     grep -qE -e "$pat" "$tmp/err"; then
    ok "top $* -> $rc: $(cat "$tmp/err")"
  else
    fail "top $* -> rc=$rc (want $want), stderr:"; cat "$tmp/err" "$tmp/out" >&2
  fi
}
expect_error 2 '^pathwise: invalid value "ftp://x" for --url: want http' --once --url=ftp://x
expect_error 2 'for --sort: want name, health' --once --sort=speed
expect_error 2 'for --view: want paths, controllers or devices' --view=queues
dead=$(free_port)
expect_error 1 "^pathwise: http://127.0.0.1:$dead: .*(refused|connect)" --once --url="http://127.0.0.1:$dead"
# A web server that is not pathwise: a 404, then a 200 that is not JSON.
mkdir -p "$tmp/www"
wport=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$tmp/www" "$wport" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$wport/" && break; sleep 0.1; done
expect_error 1 "^pathwise: http://127.0.0.1:$wport/api/v1/snapshot: HTTP 404: not a pathwise agent" --once --url="http://127.0.0.1:$wport"
mkdir -p "$tmp/www/api/v1" && echo '<html>hello</html>' >"$tmp/www/api/v1/snapshot"
expect_error 1 "^pathwise: http://127.0.0.1:$wport/api/v1/snapshot: not a pathwise agent: not JSON" --once --url="http://127.0.0.1:$wport"
echo '{"status":"ok"}' >"$tmp/www/api/v1/snapshot"
expect_error 1 'not a pathwise agent: not a pathwise snapshot' --format=json --url="http://127.0.0.1:$wport"
expect_error 2 '^pathwise: top needs a terminal' --url="$url"

# --- 3. nothing at the default URL: local sampling, said in the title.
if unshare -n -- sh -c 'ip link set lo up && exec "$0" top --once --interval=200ms --bpf=off --path.sysfs="$1"' \
     "$PW" "$root" >"$tmp/local.txt" 2>"$tmp/local.err" &&
   grep -q '^pathwise top  local sampling (no agent at http://127.0.0.1:9877)  interval 0\.[0-9]s  io sysfs  sort name  gen 2  ' "$tmp/local.txt" &&
   grep -q '^  nvme0c1n1 ' "$tmp/local.txt"; then
  ok "no agent: local sampling"
else
  fail "local sampling:"; cat "$tmp/local.txt" "$tmp/local.err" >&2
fi

# --- 4. the live view in tmux.
tm() { tmux -L "$sock" "$@"; }
screen() { tm capture-pane -p -t top; }
# wait_for PATTERN: the screen shows PATTERN within 10 s (a sanitizer
# build on a loaded machine redraws slowly; found, it returns at once).
wait_for() {
  for _ in $(seq 1 100); do screen | grep -qE -e "$1" && return 0; sleep 0.1; done
  return 1
}
check() { # NAME PATTERN
  if wait_for "$2"; then ok "live: $1"; else fail "live: $1, screen:"; screen >&2; fi
}
tm -f /dev/null new-session -d -s top -x 120 -y 30 \
  "TERM=xterm '$PW' top --url='$url' --interval=300ms 2>'$tmp/live.err'; echo \$? >'$tmp/live.rc'; sleep 30" ||
  die "tmux new-session failed"
check "title and paths" "^pathwise top  $url  interval .*  sort name  gen [0-9]+"
# Healthy, or idle once --idle-windows windows passed without I/O.
check "a path row" '^  nvme0c1n1 +(healthy|idle) +optimized'
check "the key line" '^q quit  s/S sort  / filter'
tm send-keys -t top s
check "s: sort by health" 'sort health'
screen | grep -q '^nvme0n1 ' && fail "live: sorted by health still shows the head rows" || ok "live: flat when not sorted by name"
tm send-keys -t top / nvme0c1 Enter
check "/: filter" 'filter "nvme0c1"'
if screen | grep -q 'nvme0c0n1'; then fail "live: filter kept nvme0c0n1"; screen >&2; else ok "live: filter hides nvme0c0n1"; fi
tm send-keys -t top c
check "c: controllers" '^CONTROLLER +STATE'
tm send-keys -t top / BSpace BSpace BSpace BSpace BSpace BSpace BSpace Enter p
check "p: paths, filter cleared" '^nvme0c0n1 '
tm resize-window -t top -x 50 -y 15
sleep 0.5
check "resize: redrawn at 50 columns" '^PATH +HEALTH'
# The header above is on the wide screen too: wait for the narrow frame
# itself (no line over 50 columns), as a slow redraw may not be there yet.
for _ in $(seq 1 100); do [[ -z $(screen | awk 'length($0) > 50') ]] && break; sleep 0.1; done
long=$(screen | awk 'length($0) > 50')
rows=$(screen | wc -l)
[[ -z $long && $rows -le 15 ]] && ok "resize: fits 50x15" || { fail "resize: does not fit"; screen >&2; }
screen | grep -q 'ADDRESS' && fail "live: 50 columns still shows ADDRESS" || ok "live: 50 columns hides ADDRESS"
tm resize-window -t top -x 12 -y 4
sleep 0.5
tm resize-window -t top -x 100 -y 20
check "a tiny terminal and back" '^nvme0c0n1 '
tm send-keys -t top q
for _ in $(seq 1 50); do [[ -s $tmp/live.rc ]] && break; sleep 0.1; done
if [[ $(cat "$tmp/live.rc" 2>/dev/null) == 0 && ! -s $tmp/live.err ]]; then
  ok "q: exit 0, nothing on stderr"
else
  fail "q: rc=$(cat "$tmp/live.rc" 2>/dev/null) stderr: $(cat "$tmp/live.err")"
fi

if ((fails)); then
  echo "$fails check(s) failed" >&2
  exit 1
fi
echo "all top checks passed"
