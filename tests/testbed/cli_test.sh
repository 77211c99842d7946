#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bad use of the testbed command gets a clear message and a non-zero exit.
# None of these cases boots a VM.
set -uo pipefail
TB=$(dirname "$(readlink -f "$0")")/testbed
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo 'exit 0' >"$tmp/ok.sh"

# expect RC PATTERN CMD...: CMD exits RC and its stderr matches PATTERN.
expect() {
  local want=$1 pat=$2 rc=0
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [[ $rc != "$want" ]] || ! grep -qE "$pat" "$tmp/err"; then
    echo "FAIL: '$*' exited $rc (want $want), stderr:" >&2
    cat "$tmp/err" >&2
    failures=$((failures + 1))
  else
    echo "ok: $* -> $rc: $(head -n 1 "$tmp/err")"
  fi
}

expect 2 "unknown topology 'fc:2'" "$TB" run --topology fc:2 "$tmp/ok.sh"
expect 2 "N must be 1..4" "$TB" run --topology tcp:5 "$tmp/ok.sh"
expect 2 "N must be 1..4" "$TB" run --topology pcie:0 "$tmp/ok.sh"
expect 2 "loop:2 needs kernel 6.12 \\(6.1 ships no nvme-loop module\\)" "$TB" run --kernel 6.1 --topology loop:2 "$tmp/ok.sh"
expect 2 "unknown kernel '5.10'" "$TB" run --kernel 5.10 "$tmp/ok.sh"
expect 2 "multipath must be on or off" "$TB" run --multipath maybe "$tmp/ok.sh"
expect 2 "HOSTPORT:GUESTPORT" "$TB" run --forward 9877 "$tmp/ok.sh"
expect 2 "does not exist" "$TB" run "$tmp/missing.sh"
expect 2 "no SCRIPT given" "$TB" run
expect 2 "'--and' needs a SCRIPT on each side" "$TB" run "$tmp/ok.sh" --and
expect 2 "'--and' needs a SCRIPT on each side" "$TB" run "$tmp/ok.sh" --and --and "$tmp/ok.sh"
expect 2 "script '$tmp/missing.sh' does not exist" "$TB" run "$tmp/ok.sh" --and "$tmp/missing.sh"
expect 2 "unknown option '--bogus'" "$TB" run --bogus "$tmp/ok.sh"
expect 2 "nic must be veth or virtio" "$TB" run --nic e1000 "$tmp/ok.sh"
expect 2 "target must be stored or volatile" "$TB" run --target ramdisk "$tmp/ok.sh"
expect 2 "case-timeout must be seconds, not '5m'" "$TB" run --case-timeout 5m "$tmp/ok.sh"
expect 2 "case-timeout must be seconds, not '0'" "$TB" run --case-timeout=0 "$tmp/ok.sh"
expect 2 "nic virtio needs a tcp topology" "$TB" run --nic virtio --topology pcie:2 "$tmp/ok.sh"
expect 2 "cannot be combined with --forward" "$TB" run --nic virtio --forward 9877:22 "$tmp/ok.sh"
expect 2 "unknown command 'frobnicate'" "$TB" frobnicate
expect 2 "unknown kernel 'latest'" "$TB" prepare --kernel latest

# A kernel download that fails: apt-get is replaced by one that fails the
# way a broken mirror does, against an empty cache.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/apt-get" <<'SH'
#!/bin/sh
echo "E: Failed to fetch (simulated by cli_test.sh)" >&2
exit 100
SH
chmod +x "$tmp/bin/apt-get"
expect 2 "kernel download failed" env PATH="$tmp/bin:$PATH" \
  PATHWISE_TESTBED_CACHE="$tmp/cache" "$TB" prepare --kernel 6.1
[[ ! -e $tmp/cache/kernels/6.1/ready ]] || {
  echo "FAIL: a failed download left a ready kernel" >&2
  failures=$((failures + 1))
}

((failures == 0)) || {
  echo "$failures failure(s)" >&2
  exit 1
}
echo "all testbed CLI checks passed"
