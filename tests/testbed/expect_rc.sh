#!/usr/bin/env bash
# expect_rc.sh RC CMD...: succeeds when CMD exits with exactly RC.
want=$1
shift
"$@"
rc=$?
if [[ $rc != "$want" ]]; then
  echo "expect_rc: '$*' exited $rc, expected $want" >&2
  exit 1
fi
exit 0
