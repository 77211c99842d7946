# SPDX-License-Identifier: Apache-2.0
# tcp:N and loop:N (nvmet in the guest): nvme list-subsys shows one
# subsystem with N live paths of the topology's transport, and the
# variables name them. On loop, the network helpers refuse, and the
# namespace stores what is written (the data checks' target).
. "$TB_SCRIPT_DIR/assert.sh"
n=${TB_TOPOLOGY##*:}
kind=${TB_TOPOLOGY%%:*}
json=$(nvme list-subsys -o json) || fail "nvme list-subsys failed"
echo "$json" >"$TB_OUT/list-subsys.json"
expect_eq subsystems "$(jq '[.[].Subsystems[]] | length' <<<"$json")" 1
expect_eq nqn "$(jq -r '.[].Subsystems[0].NQN' <<<"$json")" "$TB_NQN"
expect_eq paths "$(jq '[.[].Subsystems[0].Paths[]] | length' <<<"$json")" "$n"
expect_eq live-paths "$(jq '[.[].Subsystems[0].Paths[] | select(.State == "live")] | length' <<<"$json")" "$n"
expect_eq transport "$(jq -r '[.[].Subsystems[0].Paths[].Transport] | unique | join(",")' <<<"$json")" "$kind"
[[ -b $TB_HEAD ]] || fail "head $TB_HEAD is not a block device"
[[ -c $TB_NG ]] || fail "generic device $TB_NG is not a char device"
expect_eq path-count "${#TB_PATHS[@]}" "$n"
for i in "${!TB_PATHS[@]}"; do
  p=${TB_PATHS[i]} c=${TB_CTRLS[i]}
  [[ $p =~ ^nvme[0-9]+c[0-9]+n1$ ]] || fail "path $i name '$p'"
  [[ -d /sys/class/nvme/$c/$p ]] || fail "path $p is not under controller $c"
  if [[ $kind == tcp ]]; then
    grep -q "traddr=10.77.$i.2," "/sys/class/nvme/$c/address" || fail "controller $c is not path $i"
  else
    expect_eq "address[$i]" "$(cat "/sys/class/nvme/$c/address")" "traddr=loop$i"
  fi
  expect_eq "ana_state[$i]" "$(cat "/sys/block/$p/ana_state")" optimized
done
if [[ $kind == loop ]]; then
  out=$(tb_path_delay 0 5 2>&1) && fail "tb_path_delay on loop succeeded"
  [[ $out == *"needs a tcp topology (this is $TB_TOPOLOGY)"* ]] || fail "tb_path_delay on loop said: $out"
  pass "network helpers refuse a loop topology"
  tb_require_stored_data "$TB_HEAD" || fail "the loop target does not store data"
fi
