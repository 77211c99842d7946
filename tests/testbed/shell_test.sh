#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `testbed shell` gives an interactive guest on a terminal: the helpers and
# variables are there, and the shell's exit status is the command's.
# Drives it through a pseudo-terminal (script(1)) fed from a FIFO.
set -uo pipefail
TB=$(dirname "$(readlink -f "$0")")/testbed
tmp=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null
  exec 3>&- 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- terminal output:" >&2
  tr -d '\r' <"$tmp/out" | tail -n 30 >&2
  exit 1
}
wait_for() { # pattern seconds
  local i
  for ((i = 0; i < $2 * 4; i++)); do
    tr -d '\r' <"$tmp/out" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' | grep -qE "$1" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.25
  done
  return 1
}
mkfifo "$tmp/in"
: >"$tmp/out"
script -qfec "$TB shell --kernel 6.12 --topology tcp:1" "$tmp/out" <"$tmp/in" >/dev/null 2>&1 &
pid=$!
exec 3>"$tmp/in"
wait_for '^\[pathwise-tb [^]]*\]# ' 240 || fail "no guest prompt"
echo "ok: guest prompt"
echo 'echo "MARK:${TB_PATHS[0]}:$(type -t tb_path_delay)"' >&3
wait_for '^MARK:nvme[0-9]+c[0-9]+n1:function' 60 || fail "TB_PATHS or helpers missing in the shell"
echo "ok: variables and helpers in the shell"
echo 'exit 4' >&3
for ((i = 0; i < 240; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
kill -0 "$pid" 2>/dev/null && fail "the guest did not power off after exit"
wait "$pid"
rc=$?
pid=""
[[ $rc == 4 ]] || fail "testbed shell exited $rc, expected 4"
echo "ok: shell exit status 4 is testbed shell's"
