#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/systemd/pathwise.service: `systemd-analyze verify` (with ExecStart
# pointed at the built binary, since verify checks it exists), the same
# agent args as the DaemonSet, the hardening directives, and
# `systemd-analyze security --offline` exposure at most 3.0 ("OK").
# Then the same with the active-mode drop-in pathwise.service.d/active.conf,
# which may only add the actuator's and the probes' needs.
#   tests/deploy/systemd-test.sh PATHWISE_BINARY
set -euo pipefail
bin=$(readlink -f "$1")
here=$(dirname "$(readlink -f "$0")")
unit=$here/../../deploy/systemd/pathwise.service
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed "s|/usr/local/bin/pathwise|$bin|" "$unit" > "$tmp/pathwise.service"
out=$(systemd-analyze verify "$tmp/pathwise.service" 2>&1) || { echo "$out"; exit 1; }
# verify exits 0 on unknown keys; any diagnostic about our unit is a failure.
if grep -i 'pathwise.service' <<<"$out"; then echo "FAIL verify diagnostics"; exit 1; fi
echo "ok   systemd-analyze verify"

exec_args=$(sed -nE 's|^ExecStart=/usr/local/bin/pathwise ||p' "$unit")
ds_args=$("$here/daemonset-args.sh" --args | paste -sd' ')
[[ $exec_args == "$ds_args" ]] || { echo "FAIL ExecStart args '$exec_args' != DaemonSet '$ds_args'"; exit 1; }
echo "ok   ExecStart args equal the DaemonSet's: $exec_args"

for d in 'CapabilityBoundingSet=CAP_BPF CAP_PERFMON' 'NoNewPrivileges=yes' 'ProtectSystem=strict' \
         'ReadOnlyPaths=/sys' 'ProtectHome=yes' 'PrivateDevices=yes' 'ProtectKernelTunables=yes' \
         'ProtectKernelModules=yes' 'RestrictNamespaces=yes' 'MemoryDenyWriteExecute=yes' \
         'SystemCallFilter=@system-service bpf' 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX'; do
  grep -qxF "$d" "$unit" || { echo "FAIL missing: $d"; exit 1; }
done
echo "ok   hardening directives present"

if sec=$(systemd-analyze security --offline=yes "$tmp/pathwise.service" 2>&1); then
  level=$(sed -nE 's/.*Overall exposure level for pathwise.service: ([0-9.]+).*/\1/p' <<<"$sec")
  awk -v l="$level" 'BEGIN { exit !(l != "" && l <= 3.0) }' || { echo "FAIL exposure $level > 3.0"; exit 1; }
  echo "ok   systemd-analyze security exposure $level"
else
  echo "note systemd-analyze security --offline unsupported here"
fi

# --- the active-mode drop-in, next to the unit as systemd looks for it.
dropin=$here/../../deploy/systemd/pathwise.service.d/active.conf
mkdir "$tmp/pathwise.service.d"
sed "s|/usr/local/bin/pathwise|$bin|" "$dropin" > "$tmp/pathwise.service.d/active.conf"
out=$(systemd-analyze verify "$tmp/pathwise.service" 2>&1) || { echo "$out"; exit 1; }
if grep -i 'pathwise.service' <<<"$out"; then echo "FAIL verify diagnostics (drop-in)"; exit 1; fi
echo "ok   systemd-analyze verify with active.conf"

# Its args: the base's (without any --actuate/--probe-interval) plus active mode.
base_args=$(tr ' ' '\n' <<<"$ds_args" | grep -vE '^--(actuate|probe-interval)(=|$)' | paste -sd' ')
active_args=$(sed -nE 's|^ExecStart=/usr/local/bin/pathwise ||p' "$dropin")
[[ $active_args == "$base_args --actuate=on --probe-interval=1s" ]] ||
  { echo "FAIL active ExecStart args '$active_args'"; exit 1; }
[[ $(grep -cxF 'ExecStart=' "$dropin") -eq 1 ]] || { echo "FAIL active.conf must reset ExecStart"; exit 1; }
echo "ok   active ExecStart args: the base's plus --actuate=on --probe-interval=1s"

# Only these settings: everything else (capabilities, NoNewPrivileges,
# ProtectSystem, ...) is the unit's.
want=$(printf '%s\n' '[Service]' 'ExecStart=' "ExecStart=/usr/local/bin/pathwise $active_args" \
  'ReadWritePaths=-/sys/devices/virtual/nvme-subsystem' 'PrivateDevices=no' 'DeviceAllow=char-nvme r' \
  'SystemCallFilter=io_uring_setup io_uring_enter io_uring_register')
got=$(grep -vE '^[[:space:]]*(#|$)' "$dropin")
[[ $got == "$want" ]] || { echo "FAIL active.conf settings:"; diff <(echo "$want") <(echo "$got"); exit 1; }
echo "ok   active.conf adds only the nvme-subsystem write, read access to char-nvme and io_uring"

if sec=$(systemd-analyze security --offline=yes "$tmp/pathwise.service" 2>&1); then
  level=$(sed -nE 's/.*Overall exposure level for pathwise.service: ([0-9.]+).*/\1/p' <<<"$sec")
  awk -v l="$level" 'BEGIN { exit !(l != "" && l <= 3.0) }' || { echo "FAIL exposure with active.conf $level > 3.0"; exit 1; }
  echo "ok   systemd-analyze security exposure with active.conf $level"
fi

# --- the datapath's unit: verify, its command, what it may open, exposure.
dunit=$here/../../deploy/systemd/pathwise-datapath.service
sed "s|/usr/local/bin/pathwise|$bin|" "$dunit" > "$tmp/pathwise-datapath.service"
out=$(systemd-analyze verify "$tmp/pathwise-datapath.service" 2>&1) || { echo "$out"; exit 1; }
if grep -i 'pathwise-datapath.service' <<<"$out"; then echo "FAIL verify diagnostics (datapath)"; exit 1; fi
echo "ok   systemd-analyze verify pathwise-datapath.service"
dargs=$(sed -nE 's|^ExecStart=/usr/local/bin/pathwise ||p' "$dunit")
[[ $dargs == "datapath "*"--namespace="* ]] || { echo "FAIL datapath ExecStart '$dargs'"; exit 1; }
dport=$(grep -oE -- '--web.listen-address=[^ ]*' <<<"$dargs" | sed 's/.*://')
aport=$(grep -oE -- '--web.listen-address=[^ ]*' <<<"$ds_args" | sed 's/.*://')
[[ -n $dport && $dport != "$aport" ]] || { echo "FAIL datapath port '$dport' must differ from the agent's '$aport'"; exit 1; }
"$bin" datapath --help >/dev/null || { echo "FAIL pathwise datapath --help"; exit 1; }
for d in 'CapabilityBoundingSet=CAP_SYS_ADMIN CAP_SYS_RESOURCE CAP_IPC_LOCK' 'NoNewPrivileges=yes' \
         'ProtectSystem=strict' 'ReadOnlyPaths=/sys' 'DevicePolicy=closed' 'DeviceAllow=/dev/ublk-control rw' \
         'DeviceAllow=char-ublk-char rw' 'DeviceAllow=block-blkext rw' 'DeviceAllow=char-nvme-generic rw' \
         'ProtectKernelModules=yes' \
         'SystemCallFilter=@system-service io_uring_setup io_uring_enter io_uring_register'; do
  grep -qxF "$d" "$dunit" || { echo "FAIL datapath unit missing: $d"; exit 1; }
done
echo "ok   datapath unit: args ($dargs), devices, capabilities, io_uring"
if sec=$(systemd-analyze security --offline=yes "$tmp/pathwise-datapath.service" 2>&1); then
  level=$(sed -nE 's/.*Overall exposure level for pathwise-datapath.service: ([0-9.]+).*/\1/p' <<<"$sec")
  awk -v l="$level" 'BEGIN { exit !(l != "" && l <= 3.0) }' || { echo "FAIL datapath exposure $level > 3.0"; exit 1; }
  echo "ok   systemd-analyze security exposure (datapath) $level"
fi
