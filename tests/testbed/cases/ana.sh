# SPDX-License-Identifier: Apache-2.0
# tb_path_ana changes the path's ANA state as the host sees it.
. "$TB_SCRIPT_DIR/assert.sh"
tb_path_ana 1 inaccessible || fail "tb_path_ana"
expect_eq "ana_state[1]" "$(cat "/sys/block/${TB_PATHS[1]}/ana_state")" inaccessible
expect_eq "ana_state[0]" "$(cat "/sys/block/${TB_PATHS[0]}/ana_state")" optimized
# I/O still completes through the head, on path 0 only.
read -r r1a _ < <(tb_path_stat 1)
dd if="$TB_HEAD" of=/dev/null bs=4k count=128 iflag=direct status=none || fail "read"
read -r r1b _ < <(tb_path_stat 1)
expect_eq "reads on the inaccessible path" "$((r1b - r1a))" 0
tb_path_ana 1 non-optimized || fail "tb_path_ana non-optimized"
expect_eq "ana_state[1]" "$(cat "/sys/block/${TB_PATHS[1]}/ana_state")" non-optimized
tb_path_ana 1 optimized || fail "tb_path_ana optimized"
expect_eq "ana_state[1]" "$(cat "/sys/block/${TB_PATHS[1]}/ana_state")" optimized
