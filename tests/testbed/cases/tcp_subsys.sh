# SPDX-License-Identifier: Apache-2.0
# tcp:N: nvme list-subsys shows one subsystem with N live paths, and the
# variables name them.
. "$TB_SCRIPT_DIR/assert.sh"
n=${TB_TOPOLOGY##*:}
json=$(nvme list-subsys -o json) || fail "nvme list-subsys failed"
echo "$json" >"$TB_OUT/list-subsys.json"
expect_eq subsystems "$(jq '[.[].Subsystems[]] | length' <<<"$json")" 1
expect_eq nqn "$(jq -r '.[].Subsystems[0].NQN' <<<"$json")" "$TB_NQN"
expect_eq paths "$(jq '[.[].Subsystems[0].Paths[]] | length' <<<"$json")" "$n"
expect_eq live-paths "$(jq '[.[].Subsystems[0].Paths[] | select(.State == "live")] | length' <<<"$json")" "$n"
expect_eq transport "$(jq -r '[.[].Subsystems[0].Paths[].Transport] | unique | join(",")' <<<"$json")" tcp
[[ -b $TB_HEAD ]] || fail "head $TB_HEAD is not a block device"
[[ -c $TB_NG ]] || fail "generic device $TB_NG is not a char device"
expect_eq path-count "${#TB_PATHS[@]}" "$n"
for i in "${!TB_PATHS[@]}"; do
  p=${TB_PATHS[i]} c=${TB_CTRLS[i]}
  [[ $p =~ ^nvme[0-9]+c[0-9]+n1$ ]] || fail "path $i name '$p'"
  [[ -d /sys/class/nvme/$c/$p ]] || fail "path $p is not under controller $c"
  grep -q "traddr=10.77.$i.2," "/sys/class/nvme/$c/address" || fail "controller $c is not path $i"
  expect_eq "ana_state[$i]" "$(cat "/sys/block/$p/ana_state")" optimized
done
