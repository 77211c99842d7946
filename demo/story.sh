# Guest side of the demo (runs in the testbed with tblib.sh sourced).
# Args: PATHWISE_BINARY PHASE_SECONDS
pw=$1 phase=${2:-15}
url=http://127.0.0.1:9877
tb_iopolicy round-robin

"$pw" serve --interval=1s >/tmp/pathwise.log 2>&1 &
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

# One line per path per second from pathwise's /metrics: reads/s and mean read
# latency from the deltas of the path counters.
view() { # seconds label
  local secs=$1 label=$2 end prev="" now
  end=$((SECONDS + secs))
  while ((SECONDS < end)); do
    now=$(curl -sf --max-time 2 "$url/metrics" | awk -v t="$(date +%s.%N)" '
      /^pathwise_path_io_(completed|time_seconds)_total\{/ && /op="read"/ {
        match($0, /path="[^"]*"/); p = substr($0, RSTART + 6, RLENGTH - 7)
        if ($0 ~ /^pathwise_path_io_completed/) c[p] = $NF; else s[p] = $NF
      }
      END { for (p in c) printf "%s %s %s %s\n", p, t, c[p], s[p] }' | sort)
    if [[ -n $prev ]]; then
      join <(echo "$prev") <(echo "$now") | awk -v label="$label" '
        { dt = $5 - $2; dn = $6 - $3; ds = $7 - $4
          line = line sprintf("  %s %6.0f IOPS %7.2f ms", $1, dt > 0 ? dn / dt : 0, dn > 0 ? ds / dn * 1000 : 0) }
        END { printf "%-24s%s\n", label, line }'
    fi
    prev=$now
    sleep 1
  done
}

echo
echo "== live per-path view from pathwise /metrics (reads/s, mean read latency)"
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
"$pw" snapshot --duration=1s | grep -E '^pathwise_head_io_(completed_total|bytes_total)\{.*op="read"'
