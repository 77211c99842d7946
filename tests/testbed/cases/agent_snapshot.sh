# SPDX-License-Identifier: Apache-2.0
# pathwise snapshot / topology against the real topology of this guest.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/assert.sh"
pw=$1
n=${TB_TOPOLOGY##*:}
kind=${TB_TOPOLOGY%%:*}
f=$TB_OUT/snapshot.prom
"$pw" snapshot --duration=2s >"$f" || fail "pathwise snapshot exited $?"
promtool check metrics <"$f" || fail "promtool check metrics"
pass "promtool check metrics"
head=${TB_HEAD#/dev/}
expect_eq subsystem_info "$(prom_count "$f" pathwise_subsystem_info subsystem="$TB_SUBSYS")" 1
expect_eq subsystem_nqn "$(prom_count "$f" pathwise_subsystem_info subsystem="$TB_SUBSYS" nqn="$TB_NQN")" 1
expect_eq subsystem_iopolicy "$(prom_count "$f" pathwise_subsystem_info iopolicy="$(cat /sys/class/nvme-subsystem/$TB_SUBSYS/iopolicy)")" 1
expect_eq head_info "$(prom_count "$f" pathwise_head_info)" 1
expect_eq head_info_labels "$(prom_count "$f" pathwise_head_info subsystem="$TB_SUBSYS" head="$head" nsid=1)" 1
expect_eq path_info "$(prom_count "$f" pathwise_path_info)" "$n"
for i in "${!TB_PATHS[@]}"; do
  p=${TB_PATHS[i]} c=${TB_CTRLS[i]}
  addr=$(cat /sys/class/nvme/$c/address)
  expect_eq "path_info[$i]" "$(prom_count "$f" pathwise_path_info subsystem="$TB_SUBSYS" \
    head="$head" path="$p" controller="$c" transport="$kind")" 1
  prom_values "$f" pathwise_path_info path="$p" >/dev/null
  grep -E "^pathwise_path_info\{.*path=\"$p\"" "$f" | grep -qF "address=\"$addr\"" ||
    fail "path $p: address label is not '$addr'"
  expect_eq "ana[$i]" "$(prom_values "$f" pathwise_path_ana_state path="$p" state=optimized)" 1
  expect_eq "ctrl_live[$i]" "$(prom_values "$f" pathwise_controller_state controller="$c" state=live)" 1
  expect_eq "ctrl_info[$i]" "$(prom_count "$f" pathwise_controller_info controller="$c" \
    subsystem="$TB_SUBSYS" transport="$kind" cntlid="$(cat /sys/class/nvme/$c/cntlid)")" 1
  expect_eq "io_queues[$i]" "$(prom_values "$f" pathwise_controller_io_queues controller="$c")" \
    "$(($(cat /sys/class/nvme/$c/queue_count) - 1))"
done
expect_eq controllers_live "$(prom_values "$f" pathwise_controller_state state=live | grep -c '^1$')" "$n"
expect_eq sampler "$(prom_count "$f" pathwise_sampler_info)" 1

t=$TB_OUT/topology.txt
"$pw" topology >"$t" || fail "pathwise topology exited $?"
cat "$t"
grep -qF "$TB_SUBSYS" "$t" || fail "topology: no $TB_SUBSYS"
grep -qF "$head" "$t" || fail "topology: no head $head"
for i in "${!TB_PATHS[@]}"; do
  grep -qF "${TB_PATHS[i]}" "$t" || fail "topology: no path ${TB_PATHS[i]}"
  grep -qF "${TB_CTRLS[i]}" "$t" || fail "topology: no controller ${TB_CTRLS[i]}"
done
"$pw" topology --format=json | jq -e . >"$TB_OUT/topology.json" || fail "topology json"
pass "topology text and json"
