# SPDX-License-Identifier: Apache-2.0
# A case that hangs: a child blocked in the kernel (a FIFO nobody opens for
# writing) and the case's shell waiting for it. Only `--case-timeout` ends
# it; the launcher must print where both wait, kill them, and run the next
# case (exit_status_test.sh checks that).
mkfifo /run/tb-hang.fifo
cat /run/tb-hang.fifo &
echo "hanging on purpose: cat $! blocks opening a FIFO"
wait
echo "FAIL: the hang ended by itself" >&2
exit 1
