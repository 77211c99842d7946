#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Least privilege, proven on this kernel (label bpf: root, real BPF):
# the agent, with the DaemonSet's args and only the DaemonSet's capabilities
# in its bounding set (and, separately, only the systemd unit's), loads the
# eBPF sampler with --bpf=required; without CAP_BPF, or without
# CAP_PERFMON, it cannot. CAP_SYS_RESOURCE is only needed for BPF map
# memlock on kernels < 5.11 (memcg accounting since), so its absence is
# reported, not failed, on newer kernels.
#   tests/deploy/capabilities-test.sh PATHWISE_BINARY
set -euo pipefail
bin=$(readlink -f "$1")
here=$(dirname "$(readlink -f "$0")")
root=$here/../..
[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root"; exit 77; }
command -v setpriv >/dev/null || { echo "setpriv (util-linux) missing"; exit 1; }

mapfile -t args < <("$here/daemonset-args.sh" --args)
mapfile -t caps < <("$here/daemonset-args.sh" --caps)
[[ ${args[0]} == serve ]] || { echo "DaemonSet args do not start with serve"; exit 1; }
# snapshot takes the same collection flags as serve, minus the listener and
# the serve-only probes and actuator.
snap=(snapshot --duration=1s)
for a in "${args[@]:1}"; do
  case $a in
    --web.listen-address=* | --probe[-_]* | --actuate*) ;;
    --bpf=*) snap+=(--bpf=required) ;;
    *) snap+=("$a") ;;
  esac
done

bounding() { local s="-all" c; for c in "$@"; do s+=",+${c,,}"; done; echo "$s"; }
run_with() {  # run_with CAP... ; sets out, rc
  set +e
  out=$(setpriv --bounding-set "$(bounding "$@")" --inh-caps=-all -- "$bin" "${snap[@]}" 2>&1)
  rc=$?
  set -e
}
fail=0
run_with "${caps[@]}"
if [[ $rc -eq 0 ]] && grep -q '^pathwise_sampler_info{source="bpf"} 1' <<<"$out"; then
  echo "ok   DaemonSet capabilities (${caps[*]}): eBPF sampler loads"
else
  echo "FAIL DaemonSet capabilities (${caps[*]}): rc=$rc"; tail -3 <<<"$out"; fail=1
fi

unit_caps=$(sed -nE 's/^CapabilityBoundingSet=//p' "$root/deploy/systemd/pathwise.service" | sed 's/CAP_//g')
# shellcheck disable=SC2086
run_with $unit_caps
if [[ $rc -eq 0 ]] && grep -q '^pathwise_sampler_info{source="bpf"} 1' <<<"$out"; then
  echo "ok   systemd CapabilityBoundingSet ($unit_caps): eBPF sampler loads"
else
  echo "FAIL systemd CapabilityBoundingSet ($unit_caps): rc=$rc"; tail -3 <<<"$out"; fail=1
fi

for drop in "${caps[@]}"; do
  rest=(); for c in "${caps[@]}"; do [[ $c == "$drop" ]] || rest+=("$c"); done
  run_with "${rest[@]}"
  if [[ $drop == SYS_RESOURCE ]]; then
    echo "note without SYS_RESOURCE: rc=$rc (needed only for memlock on kernels < 5.11; this is $(uname -r))"
  elif [[ $rc -ne 0 ]]; then
    echo "ok   without $drop the sampler cannot load: $(grep -m1 -o 'permission denied.*' <<<"$out" || tail -1 <<<"$out")"
  else
    echo "FAIL without $drop the sampler still loads: $drop is not needed, drop it from the manifests"; fail=1
  fi
done
exit $fail
