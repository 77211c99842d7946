#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pathwise-ublk's bad-input contract on any host: exit 2 and one line, and
# the no-ublk_drv line when the control device is missing (pointed at a
# path that cannot exist, so that a host with ublk_drv gives the same).
# Args: PATHWISE_UBLK_BINARY
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # name expected-rc expected-line cmd...
  local name=$1 rc=$2 line=$3
  shift 3
  local out got
  out=$("$@" 2>&1)
  got=$?
  if [[ $got != "$rc" || $out != "$line" ]]; then
    echo "FAIL $name: rc $got, output '$out'; expected rc $rc, '$line'"
    fails=$((fails + 1))
  else
    echo "ok $name"
  fi
}
check no-ublk-drv 2 \
  "pathwise-ublk: ublk_drv is not loaded; the datapath needs Linux >= 6.1 with CONFIG_BLK_DEV_UBLK (modprobe ublk_drv)" \
  "$bin" --backend "file:$tmp/img" --size 1048576 --ublk_control "$tmp/no-such-control"
check bad-backend 2 "pathwise-ublk: --backend must be file:PATH, not 'nvme:1'" \
  "$bin" --backend nvme:1
check missing-file 2 "pathwise-ublk: open $tmp/none: No such file or directory" \
  "$bin" --backend "file:$tmp/none"
: >"$tmp/small"
check small-file 2 "pathwise-ublk: $tmp/small is smaller than 4 KiB" \
  "$bin" --backend "file:$tmp/small"
check bad-depth 2 "pathwise-ublk: depth must be 1..4096, not 0" \
  "$bin" --backend "file:$tmp/img" --depth 0 --ublk_control "$tmp/no-such-control"
check bad-scheduler 2 "pathwise-ublk: --scheduler must be an I/O scheduler's name (none, mq-deadline, ...) or kernel, not '../x'" \
  "$bin" --backend "file:$tmp/img" --scheduler ../x --ublk_control "$tmp/no-such-control"
exit $((fails > 0))
