# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2034  # fio_cpu is the sourcing script's
# Sourced by the BPF cost benches (bpf_overhead.sh, bpf_cost_ab.sh).
# PLACEMENT=same|cross: fio on CPU 0 (fio_cpu, its flags) and the unbound
# workqueues, where a loop device completes, on CPU 0 (same) or CPU 1
# (cross); unset: both where the scheduler puts them. placement_apply
# writes the workqueue mask, placement_restore puts the old one back.
placement_wq=/sys/devices/virtual/workqueue/cpumask
fio_cpu=() placement_mask="" placement_was=""
case ${PLACEMENT:-} in
  "") ;;
  same) fio_cpu=(--cpus_allowed=0) placement_mask=1 ;;
  cross) fio_cpu=(--cpus_allowed=0) placement_mask=2 ;;
  *) echo "PLACEMENT must be same or cross" >&2; exit 2 ;;
esac
placement_apply() {
  [[ -n $placement_mask ]] || return 0
  (($(nproc) >= 2)) || { echo "PLACEMENT needs 2 CPUs" >&2; exit 2; }
  placement_was=$(cat "$placement_wq")
  echo "$placement_mask" >"$placement_wq"
}
placement_restore() {
  [[ -z $placement_was ]] || echo "$placement_was" >"$placement_wq"
}
# For a results file: where fio and the loop device's worker ran.
placement_text() {
  if [[ -z $placement_mask ]]; then
    echo "by the scheduler"
  else
    echo "$PLACEMENT (fio on CPU 0, the loop worker on CPU $((placement_mask - 1)))"
  fi
}
