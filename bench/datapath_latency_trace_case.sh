# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Guest half of bench/datapath_latency_trace.sh (a testbed case script, run
# by `testbed run`): the latency-bound scenario (netem BASE_DELAY_MS on both
# paths), fio randread 4k NUMJOBS x IODEPTH, on one side:
#   kernel:   the head device under round-robin (--multipath on)
#   datapath: `pathwise datapath`'s /dev/ublkbN (--multipath off), the main
#             build and each variant in turn
# For each configuration: a plain fio run, a traced one (tracefs events in a
# private instance, trace clock mono), a plain one again. Writes to $TB_OUT:
#   rows.txt          one line per run: config phase iops clat_mean_us ios
#   trace-CONFIG.txt  the traced run's events (text)
#   meta-CONFIG.txt   what the analyzer needs: device numbers, thread ids
#   events.txt        the events asked for and whether the kernel has them
#
# Args: SIDE TRACED_S PLAIN_S NUMJOBS IODEPTH BASE_DELAY_MS PATHWISE POLICY
#       VARIANTS FIO_ARGS [DATAPATH_ARGS...]
#   VARIANTS: "" or "NAME|BINARY|ARGS;..." (datapath side only)
#   FIO_ARGS: "" or more fio options for every run (e.g. --cpus_allowed=0)
set -u
side=$1 traced_s=$2 plain_s=$3 numjobs=$4 iodepth=$5 base_delay=$6 bin=$7
policy=$8 variant_list=$9 fio_args=${10}
shift 10
dp_args=("$@")
rows=$TB_OUT/rows.txt
: >"$rows"

die() {
  echo "datapath_latency_trace: $*" >&2
  exit 1
}

command -v fio >/dev/null || die "fio is not installed"
command -v jq >/dev/null || die "jq is not installed"
case $side in
  kernel) [[ $TB_MULTIPATH == on ]] || die "the kernel side needs --multipath on" ;;
  datapath)
    [[ $TB_MULTIPATH == off ]] || die "the datapath side needs --multipath off"
    modprobe ublk_drv 2>/dev/null
    [[ -e /dev/ublk-control ]] || die "ublk_drv is not available in this kernel ($(uname -r))"
    ;;
  *) die "side '$side': want kernel or datapath" ;;
esac

tracing=/sys/kernel/tracing
[[ -d $tracing/instances ]] || die "no tracefs at $tracing"
# The events of one I/O's way, both sides. Missing ones are skipped (and
# listed in events.txt); the analyzer says which segments it could not see.
events=(
  block/block_bio_queue block/block_bio_remap block/block_bio_complete
  block/block_rq_issue block/block_rq_complete
  nvme/nvme_setup_cmd nvme/nvme_complete_rq
  nvmet/nvmet_req_init nvmet/nvmet_req_complete
  io_uring/io_uring_submit_req io_uring/io_uring_complete
  io_uring/io_uring_cqring_wait io_uring/io_uring_local_work_run
  io_uring/io_uring_task_work_run
  sched/sched_waking sched/sched_wakeup sched/sched_switch
  sched/sched_migrate_task
  ipi/ipi_send_cpu ipi/ipi_send_cpumask
  irq_vectors/reschedule_entry irq_vectors/call_function_single_entry
  power/cpu_idle
  workqueue/workqueue_execute_start
)
: >"$TB_OUT/events.txt"
for e in "${events[@]}"; do
  if [[ -d $tracing/events/$e ]]; then
    echo "$e yes" >>"$TB_OUT/events.txt"
  else
    echo "$e missing" >>"$TB_OUT/events.txt"
  fi
done

# fio_run CONFIG PHASE DEV: one fio run; appends its row.
fio_run() {
  local config=$1 phase=$2 dev=$3 secs=$plain_s json
  [[ $phase == traced ]] && secs=$traced_s
  json=$TB_OUT/fio-$config-$phase.json
  # shellcheck disable=SC2086 # fio_args is a list of options
  fio --name=lat --filename="$dev" --eta=never --direct=1 --ioengine=io_uring \
    --rw=randread --bs=4k --numjobs="$numjobs" --iodepth="$iodepth" --group_reporting \
    --time_based --runtime="$secs" --norandommap --randrepeat=0 \
    --output-format=json --output="$json" $fio_args || die "fio failed on $dev ($config $phase)"
  jq -r --arg c "$config" --arg p "$phase" \
    '.jobs[0] | "\($c) \($p) \(.read.iops | floor) \(.read.clat_ns.mean / 1000 | floor) \(.read.total_ios)"' \
    "$json" | tee -a "$rows"
}

# traced_run CONFIG DEV: fio under the instance's events.
traced_run() {
  local config=$1 dev=$2 inst=$tracing/instances/pwlat e
  rmdir "$inst" 2>/dev/null
  mkdir "$inst" || die "cannot create the trace instance $inst"
  echo mono >"$inst/trace_clock" || die "trace clock mono refused"
  # ~100 bytes per event, ~40 events per I/O, a few thousand I/Os: well
  # within 16 MiB per CPU; overflow shows as lost events in the analysis.
  echo 16384 >"$inst/buffer_size_kb"
  for e in "${events[@]}"; do
    [[ -d $inst/events/$e ]] && echo 1 >"$inst/events/$e/enable"
  done
  echo 1 >"$inst/tracing_on"
  fio_run "$config" traced "$dev"
  echo 0 >"$inst/tracing_on"
  cat "$inst/trace" >"$TB_OUT/trace-$config.txt"
  cat "$inst/per_cpu"/cpu*/stats >"$TB_OUT/trace-stats-$config.txt" 2>/dev/null
  rmdir "$inst"
}

# meta CONFIG DEV [SERVER_PID]: device numbers and thread ids for the analyzer.
meta() {
  local config=$1 dev=$2 spid=${3:-} f=$TB_OUT/meta-$1.txt t d
  {
    echo "side $side"
    echo "config $config"
    echo "dev ${dev##*/} $(($(stat -L -c '0x%t' "$dev"))):$(($(stat -L -c '0x%T' "$dev")))"
    # The namespaces' disks, the hidden per-path ones (nvmeXcYnZ) included.
    for d in /sys/class/block/nvme*; do
      [[ -e $d/dev && -e $d/queue/logical_block_size ]] &&
        echo "nvmedisk ${d##*/} $(cat "$d/dev") $(cat "$d/queue/logical_block_size")"
    done
    if [[ -n $spid ]]; then
      echo "server_pid $spid"
      for t in /proc/"$spid"/task/*; do
        echo "server_thread ${t##*/} $(cat "$t/comm") $(awk '/Cpus_allowed_list/ { print $2 }' "$t/status")"
      done
    fi
    echo "cpus $(nproc)"
  } >"$f"
}

delay_on() {
  tb_path_delay 0 "$base_delay" || die "netem refused on path 0"
  tb_path_delay 1 "$base_delay" || die "netem refused on path 1"
}
delay_off() {
  tb_path_clear 0
  tb_path_clear 1
}

echo "datapath_latency_trace: $side, +${base_delay} ms both paths, fio randread 4k ${numjobs}x${iodepth}, $(uname -r)"
if [[ $side == kernel ]]; then
  tb_iopolicy round-robin || die "tb_iopolicy round-robin"
  delay_on
  meta kernel "$TB_HEAD"
  fio_run kernel plain "$TB_HEAD"
  traced_run kernel "$TB_HEAD"
  fio_run kernel plain "$TB_HEAD"
  delay_off
  exit 0
fi

# datapath_config NAME BINARY [ARGS...]
datapath_config() {
  local name=$1 b=$2
  shift 2
  local args=("${dp_args[@]}")
  (($# > 0)) && args=("$@")
  [[ -x $b ]] || die "$name: no pathwise binary at $b"
  local log=$TB_OUT/server-$name.log
  "$b" datapath --namespace auto --policy "$policy" --web.listen-address "" \
    "${args[@]}" >"$TB_OUT/device.txt" 2>"$log" &
  local pid=$!
  tb_wait 20 test -s "$TB_OUT/device.txt" || { cat "$log" >&2; die "$name: the datapath announced no device"; }
  local dev
  dev=$(head -1 "$TB_OUT/device.txt")
  [[ -b $dev ]] || die "'$dev' is not a block device"
  delay_on
  meta "$name" "$dev" "$pid"
  fio_run "$name" plain "$dev"
  traced_run "$name" "$dev"
  fio_run "$name" plain "$dev"
  delay_off
  kill -TERM "$pid"
  wait "$pid" || die "$name: the datapath exited $? after SIGTERM"
  : >"$TB_OUT/device.txt"
  tb_wait 10 eval '! ls /dev/ublkb* >/dev/null 2>&1' || die "ublk device left behind"
}

datapath_config main "$bin"
IFS=';' read -ra variants <<<"$variant_list"
for v in "${variants[@]}"; do
  IFS='|' read -r vname vbin vargs <<<"$v"
  # shellcheck disable=SC2086 # vargs is a list of flags
  datapath_config "$vname" "$vbin" $vargs
done
exit 0
