# SPDX-License-Identifier: Apache-2.0
# The launcher's answer to a guest kernel panic mid-run: the first boot
# crashes the guest kernel here (sysrq c), and the launcher must boot once
# more and run every case again; the second boot finds the marker the first
# left in the job directory (which the launcher keeps across the two boots)
# and passes.
marker=/tb/panic_once.marker
if [[ -e $marker ]]; then
  echo "second boot: the launcher ran the cases again after the panic"
  exit 0
fi
: >"$marker"
sync
echo "first boot: crashing the guest kernel"
echo c >/proc/sysrq-trigger
sleep 30
echo "FAIL: the guest survived sysrq c" >&2
exit 1
