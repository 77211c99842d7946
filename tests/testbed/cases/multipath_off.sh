# SPDX-License-Identifier: Apache-2.0
# --multipath off: every controller has its own namespace and generic device.
. "$TB_SCRIPT_DIR/assert.sh"
n=${TB_TOPOLOGY##*:}
expect_eq multipath-param "$(cat /sys/module/nvme_core/parameters/multipath)" N
expect_eq head "$TB_HEAD" ""
expect_eq ng-count "$(ls /dev/ng* | wc -l)" "$n"
declare -A seen
for i in "${!TB_NGS[@]}"; do
  ng=${TB_NGS[i]}
  [[ -c $ng ]] || fail "$ng is not a char device"
  [[ -z ${seen[$ng]:-} ]] || fail "$ng listed twice"
  seen[$ng]=1
  [[ -b /dev/${TB_PATHS[i]} ]] || fail "/dev/${TB_PATHS[i]} missing"
done
pass "$n separate generic devices: ${TB_NGS[*]}"
