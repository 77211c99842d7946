# Guest side of the demo (runs in the testbed with tblib.sh sourced).
# Args: PATHWISE_BINARY PHASE_SECONDS
pw=$1 phase=${2:-15}
url=http://127.0.0.1:9877
tb_iopolicy round-robin

# Fine buckets: the view's p50/p99 are computed from the text exposition,
# and the default coarse buckets (a factor 2 wide) would blur a 30 ms delay.
"$pw" serve --interval=1s --histogram_buckets=fine >/tmp/pathwise.log 2>&1 &
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

# One line per scrape of pathwise's /metrics (every second or so; slower
# under TCG load): per path reads/s, mean read latency, and p50/p99 from the
# eBPF latency histograms (demo/path_latency.awk).
view() { # seconds label
  local secs=$1 label=$2 end t0 t1
  end=$((SECONDS + secs))
  curl -sf --max-time 5 "$url/metrics" -o /tmp/prev.prom
  t0=$(date +%s.%N)
  while ((SECONDS < end)); do
    sleep 1
    curl -sf --max-time 5 "$url/metrics" -o /tmp/now.prom || continue
    t1=$(date +%s.%N)
    awk -v t0="$t0" -v t1="$t1" -v label="$label" \
      -f "$TB_SCRIPT_DIR/path_latency.awk" /tmp/prev.prom /tmp/now.prom
    mv /tmp/now.prom /tmp/prev.prom
    t0=$t1
  done
}

echo
echo "== live per-path view from pathwise /metrics (reads/s; read latency mean, p50, p99 from the eBPF histograms;"
echo "   read weight 0-64 and health from pathwise's scoring; the iopolicy it recommends)"
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
"$pw" snapshot --duration=1s --log_level=warn | grep -E '^pathwise_head_io_(completed_total|bytes_total)\{.*op="read"'
