# SPDX-License-Identifier: Apache-2.0
# tb_ctrl_disconnect then tb_ctrl_reconnect leave the subsystem with N live paths.
. "$TB_SCRIPT_DIR/assert.sh"
n=${TB_TOPOLOGY##*:}
c0=${TB_CTRLS[0]}
tb_ctrl_disconnect 0 || fail "disconnect"
[[ ! -e /sys/class/nvme/$c0 ]] || fail "$c0 still present"
expect_eq "ctrl[0] after disconnect" "${TB_CTRLS[0]}" ""
expect_eq live "$(cat /sys/class/nvme-subsystem/"$TB_SUBSYS"/nvme*/state | grep -c live)" $((n - 1))
dd if="$TB_HEAD" of=/dev/null bs=4k count=64 iflag=direct status=none || fail "read with one path gone"
tb_ctrl_reconnect 0 || fail "reconnect"
[[ -n ${TB_CTRLS[0]} ]] || fail "no controller for path 0 after reconnect"
json=$(nvme list-subsys -o json)
expect_eq live-paths "$(jq '[.[].Subsystems[0].Paths[] | select(.State == "live")] | length' <<<"$json")" "$n"
expect_eq subsystems "$(jq '[.[].Subsystems[]] | length' <<<"$json")" 1
