# SPDX-License-Identifier: Apache-2.0
# pcie:N: QEMU's nvme-subsys with N controllers gives native multipath.
. "$TB_SCRIPT_DIR/assert.sh"
n=${TB_TOPOLOGY##*:}
json=$(nvme list-subsys -o json) || fail "nvme list-subsys failed"
echo "$json" >"$TB_OUT/list-subsys.json"
expect_eq subsystems "$(jq '[.[].Subsystems[]] | length' <<<"$json")" 1
expect_eq live-paths "$(jq '[.[].Subsystems[0].Paths[] | select(.State == "live")] | length' <<<"$json")" "$n"
expect_eq transport "$(jq -r '[.[].Subsystems[0].Paths[].Transport] | unique | join(",")' <<<"$json")" pcie
# Controllers probe in parallel, so the subsystem (and head) instance is
# whichever controller came first: nvme-subsysK has head nvmeKn1.
k=${TB_SUBSYS#nvme-subsys}
expect_eq head "$TB_HEAD" "/dev/nvme${k}n1"
for i in "${!TB_PATHS[@]}"; do
  [[ ${TB_PATHS[i]} =~ ^nvme${k}c[0-9]+n1$ ]] || fail "path $i name '${TB_PATHS[i]}'"
  [[ -e /sys/block/${TB_PATHS[i]} ]] || fail "no /sys/block/${TB_PATHS[i]}"
done
expect_eq hidden-paths "$(ls -d /sys/block/nvme${k}c*n1 | wc -l)" "$n"
dd if="$TB_HEAD" of=/dev/null bs=4k count=256 iflag=direct status=none || fail "read from head"
pass "read through the head"
