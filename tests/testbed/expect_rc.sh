#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# expect_rc.sh RC CMD...: succeeds when CMD exits with exactly RC.
#
# CMD's output is kept whole, but when the test fails it is printed after a
# digest: the case summary and, for each case that failed or hung, its
# last lines (without the guest's per-request I/O error lines). A CI log
# that keeps only the head of a long multi-case boot then still names the
# case that failed and shows why.
want=$1
shift
log=$(mktemp)
trap 'rm -f "$log" "$log.case"' EXIT
"$@" >"$log" 2>&1
rc=$?
if [[ $rc == "$want" ]]; then
  cat "$log"
  exit 0
fi

noise='operation not supported error, dev |I/O error, dev |blk_print_req_error'
echo "expect_rc: '$*' exited $rc, expected $want"
echo "===== digest (the whole output follows it) ====="
# The launcher's case summary (its lines begin with "testbed: ").
grep -E '^testbed: (cases:|  (ok|FAIL|HUNG|STOPPED|-) )' "$log" | head -40
# Each failed or hung case: the watchdog's stacks and the case's last lines.
mapfile -t bad < <(grep -oE '^===== testbed case [^ ]+: (FAILED|killed|still running)' "$log" |
  sed -E 's/^===== testbed case ([^ ]+):.*/\1/' | awk '!seen[$0]++')
for name in "${bad[@]}"; do
  echo "----- case $name: its last lines -----"
  awk -v n="$name" '
    $0 ~ "^===== testbed case [0-9]+/[0-9]+: " n " =====$" { on = 1 }
    on { print }
    on && $0 ~ "^===== testbed case " n ": (ok|FAILED)" { exit }
  ' "$log" | grep -vE "$noise" >"$log.case"
  # A hung case: what it printed last, then where its processes waited.
  wd=$(grep -n -m1 -E "^===== testbed case [^ ]+: still running" "$log.case" | cut -d: -f1)
  if [[ -n $wd ]]; then
    head -n "$((wd - 1))" "$log.case" | tail -n 30
    tail -n "+$wd" "$log.case" | head -n 250
  else
    tail -n 80 "$log.case"
  fi
done
echo "===== end of digest; the whole output: ====="
cat "$log"
exit 1
