# Guest side of the demo (runs in the testbed with tblib.sh sourced).
# Until the agent reads the paths, the live view comes from sysfs: per path,
# reads per second and mean read latency from /sys/block/<path>/stat deltas.
phase=${1:-15}
tb_iopolicy round-robin

echo
echo "== topology"
nvme list-subsys "$TB_HEAD"
for i in "${!TB_PATHS[@]}"; do
  p=${TB_PATHS[i]} c=${TB_CTRLS[i]}
  echo "   path $i: $p  controller $c  $(cat /sys/class/nvme/$c/transport)" \
    "$(cut -d, -f1 /sys/class/nvme/$c/address)  ana $(cat /sys/block/$p/ana_state)" \
    " iopolicy $(cat /sys/class/nvme-subsystem/$TB_SUBSYS/iopolicy)"
done

tb_fio --rw=randread --iodepth=16 --numjobs=2 --group_reporting --runtime=3600 \
  --output=/tmp/fio.txt &
fio_pid=$!

view() { # seconds label: one line per second until the phase ends
  local secs=$1 label=$2 i prev=() now=() t_prev t_now end line
  end=$((SECONDS + secs))
  for i in "${!TB_PATHS[@]}"; do prev[i]=$(tb_path_stat "$i"); done
  t_prev=$(date +%s%N)
  while ((SECONDS < end)); do
    sleep 1
    t_now=$(date +%s%N)
    line=$(printf '%-26s' "$label")
    for i in "${!TB_PATHS[@]}"; do
      now[i]=$(tb_path_stat "$i")
      read -r r0 t0 _ <<<"${prev[i]}"
      read -r r1 t1 _ <<<"${now[i]}"
      line+=$(awk -v p="${TB_PATHS[i]}" -v dr=$((r1 - r0)) -v dt=$((t1 - t0)) \
        -v ns=$((t_now - t_prev)) \
        'BEGIN { printf "  %s %6.0f IOPS %7.2f ms", p, dr * 1e9 / ns, dr ? dt / dr : 0 }')
      prev[i]=${now[i]}
    done
    t_prev=$t_now
    echo "$line"
  done
}

echo
echo "== live per-path view (reads/s and mean read latency, from sysfs)"
view "$phase" "healthy"
tb_path_delay 0 30
view "$phase" "path 0: +30 ms delay"
tb_path_clear 0
tb_path_loss 0 5
view "$phase" "path 0: 5% packet loss"
tb_path_clear 0
view "$phase" "recovered"
kill -TERM "$fio_pid"  # async jobs ignore SIGINT
wait "$fio_pid"
echo
echo "== fio summary"
sleep 1
grep -E 'IOPS=|^ +lat \(' /tmp/fio.txt || echo "(fio wrote no summary)"
