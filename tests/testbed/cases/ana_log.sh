# SPDX-License-Identifier: Apache-2.0
# The ANA log page as pathwise reads it (nvme/ana_read.h through io_uring
# admin passthru, printed by pathwise_ana_tool) against nvme-cli's read of
# the same page, with multipath off, where the kernel keeps no ANA state;
# then path 0's port goes inaccessible and both reads must say so for
# controller 0 only. With PATHWISE, the agent (pathwise serve, probes every
# 500 ms, so an ANA log read every 5 s) must show the same in its
# snapshot's ana_logs, before and after.
# Usage: ana_log.sh PATHWISE_ANA_TOOL [PATHWISE]
. "$TB_SCRIPT_DIR/assert.sh"
tool=${1:?usage: ana_log.sh PATHWISE_ANA_TOOL [PATHWISE]}
pw=${2:-}
url=http://127.0.0.1:9877
n=${TB_TOPOLOGY##*:}
expect_eq multipath-param "$(cat /sys/module/nvme_core/parameters/multipath)" N
# The premise: no ana_state in sysfs for the per-controller namespaces.
for i in "${!TB_PATHS[@]}"; do
  [[ ! -e /sys/block/${TB_PATHS[i]}/ana_state ]] ||
    fail "/sys/block/${TB_PATHS[i]}/ana_state exists with multipath off"
done
pass "no ana_state in sysfs"

# "chgcnt C ngrps N; grpid state nsid,nsid; ..." (groups sorted) from
# either JSON (nvme-cli's keys differ between versions: state/State,
# nsid/NSID).
norm() { norm_lines | paste -sd ';'; }
norm_lines() {
  jq -r '"chgcnt \(.chgcnt) ngrps \(.ngrps)",
    ([.. | objects | select(has("grpid"))] | sort_by(.grpid)[] |
     "\(.grpid) \(.state // .State) \([(.nsids // .NSIDS // [])[] |
        if type == "object" then (.nsid // .NSID) else . end] | join(","))")'
}

# compare i: pathwise's read of controller i, nvme-cli's JSON read and
# pathwise's parse of nvme-cli's binary read must agree.
compare() {
  local c=${TB_CTRLS[$1]} ours theirs parsed
  ours=$("$tool" "/dev/$c") || fail "pathwise_ana_tool /dev/$c"
  theirs=$(nvme ana-log "/dev/$c" -o json) || fail "nvme ana-log /dev/$c"
  nvme ana-log "/dev/$c" -o binary >"$TB_OUT/ana-$c.bin" || fail "nvme ana-log -o binary"
  parsed=$("$tool" --parse "$TB_OUT/ana-$c.bin") || fail "parse of nvme-cli's page"
  echo "$ours" >"$TB_OUT/ana-$c.pathwise.json"
  echo "$theirs" >"$TB_OUT/ana-$c.nvme-cli.json"
  expect_eq "$c: pathwise vs nvme-cli" "$(norm <<<"$ours")" "$(norm <<<"$theirs")"
  expect_eq "$c: parse of nvme-cli's bytes" "$(norm <<<"$parsed")" "$(norm <<<"$theirs")"
}

# state_of i: the state of path i's namespace in controller i's page, as
# pathwise reads it.
state_of() {
  local nsid
  nsid=$(cat "/sys/block/${TB_PATHS[$1]}/nsid") || return 1
  "$tool" "/dev/${TB_CTRLS[$1]}" |
    jq -r --argjson n "$nsid" '.groups[] | select(.nsids | index($n)) | .state'
}

# agent_state i: the state of path i's namespace in the agent's snapshot
# (ana_logs of controller i).
agent_state() {
  local nsid
  nsid=$(cat "/sys/block/${TB_PATHS[$1]}/nsid") || return 1
  curl -sf --max-time 5 "$url/api/v1/snapshot" |
    jq -r --arg c "${TB_CTRLS[$1]}" --argjson n "$nsid" \
      '.ana_logs[$c].groups[]? | select(.nsids | index($n)) | .state'
}
# agent_says i STATE
agent_says() { [[ $(agent_state "$1") == "$2" ]]; }

if [[ -n $pw ]]; then
  "$pw" serve --web.listen-address=127.0.0.1:9877 --interval=1s --bpf=off \
    --probe-interval=500ms >"$TB_OUT/serve.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null' EXIT
  tb_wait 30 curl -sf -o /dev/null "$url/healthz" ||
    { cat "$TB_OUT/serve.log" >&2; fail "pathwise serve: no /healthz within 30 s"; }
fi

for ((i = 0; i < n; i++)); do
  compare "$i"
  expect_eq "path $i state" "$(state_of "$i")" optimized
  if [[ -n $pw ]]; then
    tb_wait 15 agent_says "$i" optimized ||
      fail "agent: path $i's ANA state is '$(agent_state "$i")', not optimized"
    pass "agent: path $i optimized"
  fi
done

tb_path_ana 0 inaccessible || fail "tb_path_ana 0 inaccessible"
for ((i = 0; i < n; i++)); do compare "$i"; done
expect_eq "path 0 state after the flip" "$(state_of 0)" inaccessible
for ((i = 1; i < n; i++)); do
  expect_eq "path $i state after the flip" "$(state_of "$i")" optimized
done
if [[ -n $pw ]]; then
  # The next read after the flip: within ana_every (10) probes of 500 ms.
  tb_wait 15 agent_says 0 inaccessible ||
    fail "agent: path 0's ANA state is '$(agent_state 0)', not inaccessible"
  pass "agent: path 0 inaccessible"
  for ((i = 1; i < n; i++)); do
    expect_eq "agent: path $i after the flip" "$(agent_state "$i")" optimized
  done
  curl -sf "$url/api/v1/snapshot" | jq '.ana_logs' >"$TB_OUT/agent-ana-logs.json"
fi
# Return Groups Only: the same groups without namespace ids.
rgo=$("$tool" --rgo "/dev/${TB_CTRLS[0]}") || fail "--rgo"
expect_eq "rgo: no ids" "$(jq -c '[.groups[].nsids | length] | add' <<<"$rgo")" 0
expect_eq "rgo: state" "$(jq -r '.groups[] | select(.grpid == 1) | .state' <<<"$rgo")" inaccessible

tb_path_ana 0 optimized || fail "tb_path_ana 0 optimized"
expect_eq "path 0 state restored" "$(state_of 0)" optimized
