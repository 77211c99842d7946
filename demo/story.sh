# SPDX-License-Identifier: Apache-2.0
# Guest side of the demo (runs in the testbed with tblib.sh sourced).
# Args: PATHWISE_BINARY PHASE_SECONDS [COLUMNS]
pw=$1 phase=${2:-15} cols=${3:-120}
url=http://127.0.0.1:9877
tb_iopolicy round-robin

# Fine buckets: the view's p50/p99 are computed from the text exposition,
# and the default coarse buckets (a factor 2 wide) would blur a 30 ms delay.
"$pw" serve --interval=1s --histogram-buckets=fine >/tmp/pathwise.log 2>&1 &
pw_pid=$!
tb_wait 30 curl -sf -o /dev/null "$url/healthz" || {
  echo "demo: pathwise did not come up:" >&2
  cat /tmp/pathwise.log >&2
  exit 1
}
echo
echo "== pathwise topology"
"$pw" topology

tb_fio --rw=randread --iodepth=16 --numjobs=2 --group_reporting --runtime=3600 \
  >/tmp/fio.txt 2>&1 &
fio_pid=$!

# The live view: one `pathwise top --once` frame every 3 s (rates, p50/p99
# from the eBPF latency histograms, EWMA, weight, health, the iopolicy
# advice) under the phase's label, fitted to the host terminal's width.
view() { # seconds label
  local secs=$1 label=$2 end
  end=$((SECONDS + secs))
  while ((SECONDS < end)); do
    echo
    echo "-- $label"
    "$pw" top --once --url="$url" --interval=3s --width="$cols" --log.level=warn ||
      sleep 1
  done
}

echo
echo "== live view: pathwise top --once every 3 s (per path: read IOPS, p50/p99 from the"
echo "   eBPF histograms over the last 3 s, health, read EWMA and weight; the advised iopolicy)"
view "$phase" "healthy"
tb_path_delay 0 30
view "$phase" "path 0: +30 ms delay"
tb_path_clear 0
tb_path_loss 0 5
view "$phase" "path 0: 5% packet loss"
tb_path_clear 0
view "$phase" "recovered"
kill -TERM "$fio_pid" # async jobs ignore SIGINT
wait "$fio_pid"
kill "$pw_pid"
wait "$pw_pid"
echo
echo "== head totals from pathwise"
"$pw" snapshot --duration=1s --log.level=warn | grep -E '^pathwise_head_io_(completed_total|bytes_total)\{.*op="read"'
