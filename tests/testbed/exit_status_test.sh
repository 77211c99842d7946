#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The launcher's exit status and case handling, in one boot of tcp:1 (two:
# the first panics):
#   - the status is the first failed case's: tcp_subsys passes, exit3
#     exits 3, so the run exits 3 whatever follows;
#   - a guest kernel panic mid-run (panic_once.sh) makes the launcher run
#     all the cases again in a new boot (without that the status is 126);
#   - a hung case (hang.sh) is killed by --case-timeout with the stacks of
#     its processes printed, reported HUNG, and the next case (tcp_subsys
#     again, named tcp_subsys.2) still runs and passes.
# The panic comes before the hang: the first boot ends at the panic, so the
# hang's case timeout is spent once, in the second boot, not in both. That
# timeout is 25 s: the other cases take 1 to 7 s on a quiet host, and the
# hang's wait is this test's largest cost.
set -uo pipefail
dir=$(dirname "$(readlink -f "$0")")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
hang=25
fail() {
  echo "FAIL: $*" >&2
  tail -n 60 "$out" >&2
  exit 1
}
"$dir/testbed" run --timeout 400 --case-timeout "$hang" --kernel 6.12 --topology tcp:1 "$@" \
  "$dir/cases/tcp_subsys.sh" --and "$dir/cases/exit3.sh" --and "$dir/cases/panic_once.sh" \
  --and "$dir/cases/hang.sh" --and "$dir/cases/tcp_subsys.sh" >"$out" 2>&1
rc=$?
cat "$out"
((rc == 3)) || fail "the run exited $rc, expected 3 (exit3.sh's status)"
grep -q "testbed case hang: still running after $hang s; where its processes wait" "$out" ||
  fail "no watchdog report for the hung case"
# The blocked child's own kernel wait, by name, and the case's shell.
grep -qE "task [0-9]+ cat state S wchan [a-z_]+" "$out" || fail "the report names no wait of the blocked cat"
grep -qE -- "--- pid [0-9]+: cat /run/tb-hang.fifo" "$out" || fail "the report lists no process of the case"
grep -q "testbed case hang: killed after $hang s" "$out" || fail "the hung case was not killed"
grep -qE "HUNG +hang: killed after $hang s" "$out" || fail "the summary does not say HUNG"
grep -q "the guest kernel panicked while the script ran" "$out" || fail "no panic noticed in the first boot"
grep -q "second boot: the launcher ran the cases again after the panic" "$out" ||
  fail "the cases were not run again after the panic"
grep -qE "ok +panic_once" "$out" || fail "panic_once is not reported ok"
grep -qE "ok +tcp_subsys\.2 " "$out" || fail "the case after the hung one did not run and pass"
echo "ok: exit status 3, the cases run again after a panic, the hung case killed with its stacks and reported HUNG, the case after it run"
