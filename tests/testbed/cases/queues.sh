# SPDX-License-Identifier: Apache-2.0
# Queues and flows: `pathwise queues --format json` against ground truth
# read independently in the guest (2 CPUs, veth pairs with 2 queue pairs):
# per controller its sockets and their local ports and byte counts (ss
# -tinH), one qid per queue (queue_count from sysfs), each I/O queue's
# io_work CPU (the one CPU of its hardware context, sysfs mq/N/cpu_list,
# with 2 CPUs and 2 contexts per type), the contexts' CPU lists,
# the egress device and its queue counts (sysfs), and no queue IRQs (a veth
# has none; /proc/interrupts agrees). Then path 1's controller reconnects
# with 2 write queues on top: new sockets and ports, 4 I/O queues on a
# 2-queue-pair device, flagged as over-subscribed. Text and --plan print
# and change nothing (the XPS/RPS masks read the same before and after).
# What a veth cannot show: NIC queue IRQs and their affinity (none exist),
# and a meaningful RX queue per flow (veth records none of its own).
# With testbed --nic virtio (as ctest runs it) the devices are virtio-net
# NICs with real queue IRQs instead, checked by queues_irq.sh.
# Args: PATHWISE_BINARY
. "$TB_SCRIPT_DIR/assert.sh"
. "$TB_SCRIPT_DIR/queues_irq.sh"
pw=$1
ncpu=$(nproc)
((ncpu >= 2)) || fail "guest has $ncpu CPU(s); run with --cpus 2 or more"
n=${#TB_CTRLS[@]}

snap() { # label: pathwise's map into $TB_OUT/queues-label.json
  local out=$TB_OUT/queues-$1.json
  "$pw" queues --format json --bpf=required >"$out" 2>"$TB_OUT/queues-$1.err" ||
    fail "pathwise queues ($1): $(cat "$TB_OUT/queues-$1.err")"
  echo "$out"
}

# ss_ports i: local ports of the established sockets to path i's target.
ss_ports() {
  ss -tnH state established dst "10.77.$1.2" dport = :4420 |
    awk '{ n = split($3, a, ":"); print a[n] }' | sort -n | xargs
}

# ss_bytes_received i port: bytes_received of that socket as ss shows it.
ss_bytes_received() {
  ss -tinH state established dst "10.77.$1.2" dport = :4420 sport = ":$2" |
    grep -o 'bytes_received:[0-9]*' | cut -d: -f2
}

check_controller() { # json i label
  local j=$1 i=$2 what=$3 c=${TB_CTRLS[$2]} sel qc q cpu port hctx d
  sel=".controllers[] | select(.name == \"$c\")"
  qc=$(cat "/sys/class/nvme/$c/queue_count")
  expect_eq "$what $c: local ports (ss)" \
    "$(jq -r "$sel | .flows[].local_port" "$j" | sort -n | xargs)" "$(ss_ports "$i")"
  expect_eq "$what $c: one flow per queue (queue_count $qc)" \
    "$(jq -r "$sel | .flows[].qid" "$j" | sort -n | xargs)" "$(seq 0 $((qc - 1)) | xargs)"
  expect_eq "$what $c: egress device" "$(jq -r "$sel | .netdev" "$j")" "tbh$i"
  for ((q = 1; q < qc; q++)); do
    cpu=$(jq -r "$sel | .flows[] | select(.qid == $q) | .io_cpu" "$j")
    # nvme_tcp runs queue q's io_work on a CPU of hardware context q-1
    # (6.12: the (q-1)th online CPU of its type; later kernels: the least
    # used CPU of that context's map); here each context has one CPU.
    expect_eq "$what $c qid $q: io_cpu (mq/$((q - 1))/cpu_list)" "$cpu" \
      "$(tr -d ' \n' <"/sys/block/${TB_PATHS[i]}/mq/$((q - 1))/cpu_list")"
    port=$(jq -r "$sel | .flows[] | select(.qid == $q) | .local_port" "$j")
    # An idle I/O queue's socket receives nothing between the two reads.
    expect_eq "$what $c qid $q: bytes_received (ss)" \
      "$(jq -r "$sel | .flows[] | select(.qid == $q) | .tcp.bytes_received" "$j")" \
      "$(ss_bytes_received "$i" "$port")"
  done
  for d in "/sys/block/${TB_PATHS[i]}/mq"/*; do
    hctx=${d##*/}
    expect_eq "$what $c hctx $hctx: cpus" \
      "$(jq -r "$sel | .hctxs[] | select(.index == $hctx) | .cpus | join(\",\")" "$j")" \
      "$(tr -d ' \n' <"$d/cpu_list")"
  done
  expect_eq "$what $c: hctx count" "$(jq -r "$sel | .hctxs | length" "$j")" \
    "$(ls -d "/sys/block/${TB_PATHS[i]}/mq"/* | wc -l)"
}

check_netdev() { # json i label
  local j=$1 i=$2 what=$3 sel
  sel=".netdevs[] | select(.name == \"tbh$i\")"
  expect_eq "$what tbh$i: TX queues" "$(jq -r "$sel | .tx | length" "$j")" \
    "$(ls -d /sys/class/net/tbh$i/queues/tx-* | wc -l)"
  expect_eq "$what tbh$i: RX queues" "$(jq -r "$sel | .rx | length" "$j")" \
    "$(ls -d /sys/class/net/tbh$i/queues/rx-* | wc -l)"
  if [[ $TB_NIC == virtio ]]; then
    check_netdev_irqs "$j" "$i" "$what"
    return
  fi
  expect_eq "$what tbh$i: IRQs in /proc/interrupts" "$(grep -c "tbh$i" /proc/interrupts)" 0
  expect_eq "$what tbh$i: IRQs in the map" "$(jq -r "$sel | .irqs | length" "$j")" 0
  jq -r "$sel | .irq_unknown" "$j" | grep -q "virtual device" ||
    fail "$what tbh$i: irq_unknown says $(jq -r "$sel | .irq_unknown" "$j")"
}

masks() { cat /sys/class/net/tbh*/queues/*/{xps,rps}_cpus 2>/dev/null | md5sum; }

# Some I/O so that the I/O queues' sockets have carried traffic.
tb_fio --runtime=2 --output="$TB_OUT/fio.txt" >/dev/null || fail "fio"
sleep 0.5
j=$(snap before)
expect_eq "BPF queues" "$(jq -r .bpf.queues "$j")" true
expect_eq "online CPUs" "$(jq -r .online_cpus "$j")" "$ncpu"
for ((i = 0; i < n; i++)); do
  check_controller "$j" "$i" before
  check_netdev "$j" "$i" before
done
expect_eq "mismatches with 2 I/O queues on 2 queue pairs" \
  "$(jq -r '[.mismatches[] | select(.kind == "oversubscribed")] | length' "$j")" 0
jq -r '.controllers[].flows[] | "qid \(.qid) cpu \(.io_cpu) port \(.local_port) tx \(.tx_queue) rx \(.rx_queue)"' "$j"

# Text and plan: print, change nothing.
m0=$(masks)
"$pw" queues >"$TB_OUT/queues.txt" || fail "pathwise queues (text)"
"$pw" queues --plan >"$TB_OUT/plan.txt" || fail "pathwise queues --plan"
grep -q "^${TB_CTRLS[0]} tcp 10.77.0.2:4420" "$TB_OUT/queues.txt" ||
  fail "text view: $(head -5 "$TB_OUT/queues.txt")"
expect_eq "masks after --plan" "$(masks)" "$m0"
cat "$TB_OUT/plan.txt"

# Per hardware queue (same boot, ~20 s): `pathwise serve --queues`'s
# per-queue completions against ground truth read in the guest. fio pinned
# to one CPU at a time (direct, QD1, on the head) submits every I/O from
# that CPU, so each lands on the hardware queue whose debugfs directory
# (block/<path>/hctxN/cpuC) holds that CPU, on whichever path the iopolicy
# picks (round-robin for the check, so that every path carries some): per
# CPU, the paths' completions on that CPU's queue add up to fio's count,
# the other queues get none, and per path the queues add up to the path's
# own count. debugfs has no per-hctx request counter on
# recent kernels (hctx `queued`/`dispatched` are gone), hence fio's count.
(
  . "$TB_SCRIPT_DIR/bpf_lib.sh"
  dbg=/sys/kernel/debug/block
  mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug ||
    fail "mount debugfs"
  # qid_of["i cpu"]: the qid (hctx + 1) of path i's queue that holds CPU cpu.
  declare -A qid_of
  for ((i = 0; i < n; i++)); do
    for ((cpu = 0; cpu < ncpu; cpu++)); do
      for d in "$dbg/${TB_PATHS[i]}"/hctx*; do
        [[ -d $d/cpu$cpu ]] && qid_of["$i $cpu"]=$((${d##*/hctx} + 1))
      done
      [[ -n ${qid_of["$i $cpu"]} ]] ||
        fail "no debugfs hctx of ${TB_PATHS[i]} holds CPU $cpu: $(ls "$dbg/${TB_PATHS[i]}" | xargs)"
    done
  done
  policy=/sys/class/nvme-subsystem/$TB_SUBSYS/iopolicy
  policy0=$(cat "$policy")
  echo round-robin >"$policy" || fail "iopolicy round-robin"
  bpf_start_agent "$pw" --queues
  before=$(bpf_scrape hctx-before)
  declare -a want_cpu
  total=0
  for ((cpu = 0; cpu < ncpu; cpu++)); do
    fio --eta=never --name=hctx$cpu --filename="$TB_HEAD" --direct=1 --ioengine=psync \
      --rw=randread --bs=4k --number_ios=300 --size=64m --cpus_allowed=$cpu \
      --output-format=json --output="$TB_OUT/fio-hctx$cpu.json" || fail "fio on CPU $cpu"
    want_cpu[cpu]=$(jq '.jobs[0].read.total_ios' "$TB_OUT/fio-hctx$cpu.json")
    total=$((total + want_cpu[cpu]))
  done
  after=$(bpf_scrape hctx-after)
  for ((cpu = 0; cpu < ncpu; cpu++)); do
    got=0
    for ((i = 0; i < n; i++)); do
      got=$((got + $(prom_delta "$before" "$after" pathwise_queue_hctx_completed_total \
        path="${TB_PATHS[i]}" qid="${qid_of["$i $cpu"]}")))
    done
    expect_eq "CPU $cpu: completions on its hardware queue over the paths (fio)" \
      "$got" "${want_cpu[cpu]}"
  done
  expect_eq "completions on all hardware queues (fio)" \
    "$(prom_delta "$before" "$after" pathwise_queue_hctx_completed_total)" "$total"
  for ((i = 0; i < n; i++)); do
    p=${TB_PATHS[i]}
    (($(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p") > 0)) ||
      fail "$p did no I/O under round-robin"
    expect_eq "$p: its hardware queues add up to its count" \
      "$(prom_delta "$before" "$after" pathwise_queue_hctx_completed_total path="$p")" \
      "$(prom_delta "$before" "$after" pathwise_path_io_completed_total path="$p")"
    expect_eq "$p: controller label" \
      "$(prom_samples "$after" pathwise_queue_hctx_completed_total path="$p" |
        grep -c "controller=\"${TB_CTRLS[i]}\"")" \
      "$(prom_samples "$after" pathwise_queue_hctx_completed_total path="$p" | wc -l)"
  done
  expect_eq "hctx drops" "$(prom_sum "$after" pathwise_queue_hctx_dropped_total)" 0
  bpf_stop_agent
  echo "$policy0" >"$policy" || fail "iopolicy back to $policy0"
  grep -h '^pathwise_queue_hctx_completed_total' "$after"
  pass "per hardware queue completions match fio per CPU and the debugfs CPU map"
) || fail "per hardware queue"

# Real queue IRQs (--nic virtio): each flow's RX/TX queue and IRQ against
# /proc/interrupts, then the rx_irq_off_worker rule and its plan on a real IRQ.
if [[ $TB_NIC == virtio ]]; then
  t0=$(cut -d' ' -f1 /proc/uptime)
  check_irq_flows
  check_irq_mismatch
  echo "IRQ checks: $(awk -v t0="$t0" '{ print $1 - t0 }' /proc/uptime) s of guest time"
fi

# Reconnect path 1 with 2 write queues on top of the 2 default ones.
old_ports=$(ss_ports 1)
nvme disconnect -d "${TB_CTRLS[1]}" >/dev/null || fail "disconnect"
tb_wait 20 eval "[[ -z \$(ss_ports 1) ]]" || fail "path 1 sockets stayed"
nvme connect -t tcp -a 10.77.1.2 -s 4420 -n "$TB_NQN" --hostnqn="$TB_HOSTNQN" \
  --hostid="$TB_HOSTID" --reconnect-delay=1 --nr-write-queues=2 >/dev/null ||
  fail "connect with write queues"
tb_wait 30 _tb_all_ready || fail "path 1 did not come back"
tb_refresh
expect_eq "queue_count after reconnect" "$(cat "/sys/class/nvme/${TB_CTRLS[1]}/queue_count")" 5
new_ports=$(ss_ports 1)
echo "path 1 ports: $old_ports -> $new_ports"
for p in $old_ports; do
  [[ " $new_ports " != *" $p "* ]] || echo "note: port $p reused"
done
j=$(snap after)
for ((i = 0; i < n; i++)); do
  check_controller "$j" "$i" after
  check_netdev "$j" "$i" after
done
for p in $old_ports; do
  [[ " $new_ports " == *" $p "* ]] && continue
  expect_eq "after: old port $p gone from the map" \
    "$(jq -r "[.controllers[].flows[] | select(.local_port == $p)] | length" "$j")" 0
done
expect_eq "after: ${TB_CTRLS[1]} over-subscribed (4 I/O queues, 2 queue pairs)" \
  "$(jq -c --arg c "${TB_CTRLS[1]}" '[.mismatches[] | select(.kind == "oversubscribed" and .controller == $c) | [.io_queues, .nic_queues]]' "$j")" \
  "[[4,2]]"
"$pw" queues --plan >"$TB_OUT/plan-after.txt" || fail "pathwise queues --plan (after)"
grep -q "nr-io-queues=2" "$TB_OUT/plan-after.txt" || fail "plan: $(cat "$TB_OUT/plan-after.txt")"
# Channels: the plan never asks `ethtool -L` for more than the NIC takes,
# its queue pairs (QEMU's queues=, the veth's count; sysfs shows them all);
# the virtio-net NICs report that maximum (ETHTOOL_GCHANNELS) in the map.
pairs=$(ls -d /sys/class/net/tbh1/queues/rx-* | wc -l)
for want in $(grep -o 'ethtool -L [^ ]* combined [0-9]*' "$TB_OUT/plan-after.txt" | awk '{ print $NF }'); do
  ((want <= pairs)) ||
    fail "plan: ethtool -L asks for $want channels, the NIC has $pairs: $(cat "$TB_OUT/plan-after.txt")"
done
if [[ $TB_NIC == virtio ]]; then
  expect_eq "after: max combined channels of tbh*" \
    "$(jq -c '[.netdevs[].channels.max_combined] | unique' "$j")" "[$pairs]"
fi
if [[ $TB_NIC == virtio ]]; then check_shared "$j" 1; fi
pass "queue map matches ss, sysfs and /proc/interrupts, before and after a reconnect"
