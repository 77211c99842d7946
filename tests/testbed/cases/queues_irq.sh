# SPDX-License-Identifier: Apache-2.0
# Queue IRQs of a real NIC (sourced by queues.sh; testbed --nic virtio).
# Each path is a pair of multi-queue virtio-net NICs with one MSI-X vector
# per queue (virtioN-input.Q, virtioN-output.Q in /proc/interrupts), so the
# RX queue a flow arrives on, its IRQ and that IRQ's CPU are the kernel's,
# not a fixture's. Ground truth, read here without pathwise:
#  - per device: the IRQ named after each of its queues, its
#    smp_affinity_list and effective_affinity_list, the XPS masks (sysfs);
#  - per flow: I/O submitted from one CPU only goes through the I/O queue
#    of that CPU's hardware context; the input and output queue IRQs of the
#    path's device that fired most meanwhile are that flow's RX and TX
#    queue, and /proc/interrupts says on which CPU they fired;
#  - the rx_irq_off_worker rule on a real IRQ: that IRQ moved to another
#    CPU (and seen firing there) is flagged, and the plan's own commands,
#    applied, move it back (seen firing on the worker's CPU again) and clear
#    the flag. The text view and the metric render the same mismatch list
#    (unit tests); each pathwise run costs seconds of TCG, so they are not
#    repeated here.
# Uses queues.sh's pw, ncpu, n, snap; assert.sh's helpers.
# shellcheck disable=SC2154

# cpus_of LIST: "0-2,5" -> "0,1,2,5".
cpus_of() {
  local r out=() range
  for r in ${1//,/ }; do
    if [[ $r == *-* ]]; then
      mapfile -t range < <(seq "${r%-*}" "${r#*-}")
      out+=("${range[@]}")
    else
      out+=("$r")
    fi
  done
  local IFS=,
  echo "${out[*]}"
}

# mask_cpus MASK: "3" -> "0,1" (one 32-bit group is enough for the guest).
mask_cpus() {
  local m=$((16#${1##*,})) c out=()
  for ((c = 0; c < 32; c++)); do ((m >> c & 1)) && out+=("$c"); done
  local IFS=,
  echo "${out[*]}"
}

bus_of() { basename "$(readlink "/sys/class/net/$1/device")"; }

# irq_table: IRQ_OF[action name] = IRQ number, from /proc/interrupts.
irq_table() {
  local num name
  declare -gA IRQ_OF=()
  while read -r num name; do IRQ_OF[$name]=$num; done < <(
    awk '$1 ~ /^[0-9]+:$/ { sub(":", "", $1); print $1, $NF }' /proc/interrupts)
}

# irq_snapshot FILE: "name irq count_cpu0 count_cpu1 ..." per virtio queue IRQ.
irq_snapshot() {
  awk -v n="$ncpu" '$NF ~ /^virtio[0-9]+-(input|output)\.[0-9]+$/ {
    irq = $1; sub(":", "", irq); printf "%s %s", $NF, irq
    for (c = 2; c <= n + 1; c++) printf " %s", $c
    print "" }' /proc/interrupts >"$1"
}

# busiest DEV input|output BEFORE AFTER: "queue irq cpu" of DEV's queue IRQ
# of that kind that fired most between the two snapshots, and the CPU that
# took most of those interrupts; nothing if none fired.
busiest() {
  awk -v p="$(bus_of "$1")-$2." '
    NR == FNR { for (c = 3; c <= NF; c++) b[$1, c] = $c; next }
    index($1, p) == 1 {
      d = 0; bd = -1
      for (c = 3; c <= NF; c++) { x = $c - b[$1, c]; d += x; if (x > bd) { bd = x; bc = c - 3 } }
      if (d > best) { best = d; q = substr($1, length(p) + 1); irq = $2; cpu = bc }
    }
    END { if (best > 0) print q, irq, cpu }' "$3" "$4"
}

# pinned_io CPU SECONDS: direct reads on the head from CPU only.
pinned_io() {
  (
    taskset -pc "$1" "$BASHPID" >/dev/null || exit 1
    tb_fio --runtime="$2" --iodepth=8 --output=/dev/null >/dev/null
  ) || fail "fio pinned to CPU $1"
}

# qid_of_cpu i CPU: the qid of the hardware context of path i that CPU submits to.
qid_of_cpu() {
  local d
  for d in "/sys/block/${TB_PATHS[$1]}/mq"/*; do
    [[ ,$(cpus_of "$(tr -d ' \n' <"$d/cpu_list")"), == *,$2,* ]] && echo $((${d##*/} + 1)) && return
  done
}

# check_netdev_irqs json i label: tbh<i>'s queue IRQs against /proc and
# sysfs, one line per queue (every process start is slow in a
# loaded TCG guest, so each side is one run).
check_netdev_irqs() {
  local j=$1 i=$2 what=$3 dev=tbh$2 bus q irq kind dir line want=() irqs=()
  bus=$(bus_of "$dev")
  irq_table
  want+=("driver $(basename "$(readlink "/sys/class/net/$dev/device/driver")")" "irq_unknown ")
  for dir in rx tx; do
    kind=$([[ $dir == rx ]] && echo input || echo output)
    for q in "/sys/class/net/$dev/queues/$dir"-*; do
      irq=${IRQ_OF[$bus-$kind.${q##*-}]:-}
      [[ -n $irq ]] || fail "$what $dev: no IRQ $bus-$kind.${q##*-} in /proc/interrupts"
      irqs+=("$irq")
      line="$dir ${q##*-} irq $irq affinity $(cpus_of "$(<"/proc/irq/$irq/smp_affinity_list")")"
      line+=" effective $(cpus_of "$(<"/proc/irq/$irq/effective_affinity_list")")"
      [[ $dir == tx ]] && line+=" xps $(mask_cpus "$(<"$q/xps_cpus")")"
      want+=("$line")
    done
  done
  want+=("irqs $(printf '%s\n' "${irqs[@]}" | sort -n | xargs)")
  expect_eq "$what $dev: driver, queue IRQs, their affinities, XPS" \
    "$(jq -r --arg d "$dev" '.netdevs[] | select(.name == $d) as $n |
      "driver \($n.driver)", "irq_unknown \($n.irq_unknown)",
      (("rx", "tx") as $dir | $n[$dir][] as $q | $n.irqs[] | select(.number == $q.irq) |
        "\($dir) \($q.index) irq \(.number) affinity \(.affinity | join(",")) effective \(.effective_affinity | join(","))" +
        (if $dir == "tx" then " xps \($q.xps_cpus | join(","))" else "" end)),
      "irqs \([$n.irqs[].number] | sort | map(tostring) | join(" "))"' "$j")" \
    "$(printf '%s\n' "${want[@]}")"
}

# flows_table json: "ctrl qid io_cpu rx_queue rx_irq rx_irq_cpus tx_queue"
# per I/O queue flow.
flows_table() {
  jq -r '.controllers[] | .name as $c | .flows[] | select(.qid != null and .qid > 0) |
    "\($c) \(.qid) \(.io_cpu) \(.rx_queue) \(.rx_irq) \(.rx_irq_cpus | join(",")) \(.tx_queue)"' "$1"
}

off_worker() { # json: "ctrl:qid" of each rx_irq_off_worker mismatch
  jq -r '.mismatches[] | select(.kind == "rx_irq_off_worker") | "\(.controller):\(.qid)"' "$1" | sort | xargs
}

# check_irq_flows: per CPU, I/O from that CPU only; each path's flow of
# that CPU's I/O queue against the IRQs that fired meanwhile. A socket keeps
# the queues it last used, and an idle one receives nothing: one map after
# all the runs shows each flow as its own run left it.
check_irq_flows() {
  local cpu i c qid q irq icpu tq t j b=$TB_OUT/irq-b a=$TB_OUT/irq-a want_flagged=() truth=()
  tb_iopolicy round-robin || fail "round-robin"
  for ((cpu = 0; cpu < ncpu; cpu++)); do
    irq_snapshot "$b"
    pinned_io "$cpu" 1
    irq_snapshot "$a"
    for ((i = 0; i < n; i++)); do
      read -r q irq icpu < <(busiest "tbh$i" input "$b" "$a")
      read -r tq _ _ < <(busiest "tbh$i" output "$b" "$a")
      [[ -n $q && -n $tq ]] || fail "CPU $cpu: no input or output IRQ of tbh$i fired"
      truth+=("$cpu $i $(qid_of_cpu "$i" "$cpu") $q $irq $icpu $tq")
    done
  done
  j=$(snap irq)
  local want=() eff
  for t in "${truth[@]}"; do
    read -r cpu i qid q irq icpu tq <<<"$t"
    c=${TB_CTRLS[i]}
    eff=$(cpus_of "$(<"/proc/irq/$irq/effective_affinity_list")")
    [[ ,$eff, == *,$icpu,* ]] || fail "IRQ $irq fired on CPU $icpu, outside its effective affinity $eff"
    ((icpu != cpu)) && want_flagged+=("$c:$qid")
    want+=("$c $qid $cpu $q $irq $eff $tq")
  done
  expect_eq "per flow of the I/O from one CPU: ctrl qid io_cpu rx_queue rx_irq rx_irq_cpus tx_queue (the IRQs that fired)" \
    "$(flows_table "$j" | awk 'NR == FNR { k[$1 " " $2]; next } ($1 " " $2) in k' <(printf '%s\n' "${want[@]}") - | sort)" \
    "$(printf '%s\n' "${want[@]}" | sort)"
  expect_eq "rx_irq_off_worker as /proc/interrupts has it" "$(off_worker "$j")" \
    "$(printf '%s\n' "${want_flagged[@]}" | sed '/^$/d' | sort | xargs)"
}

# check_irq_mismatch: move path 0's qid 1 RX IRQ off its worker, see it
# flagged, apply the plan's IRQ commands, see it cleared.
# The host's tap steers each flow to the guest on the queue the guest last
# sent that flow's packets from, and the guest picks a TX queue by XPS
# from the sending CPU whenever the socket has nothing in flight. With
# the RX IRQ on another CPU, the ACKs sent there leave on that CPU's TX
# queue, and the flow's RX queue follows them: the flow hops between RX
# queues and the state pathwise sees is whichever the last packet left
# (a CI run saw it on the other RX queue). So during this check every
# CPU's XPS names the TX queue of the flow's RX queue (the tap pairs them),
# and the flow stays on that queue.
check_irq_mismatch() {
  local c=${TB_CTRLS[0]} j io q irq other icpu bq cmds cmd b=$TB_OUT/irq-b a=$TB_OUT/irq-a tx
  local -A xps=()
  j=$TB_OUT/queues-irq.json
  read -r _ _ io q irq _ _ < <(flows_table "$j" | grep "^$c 1 ")
  [[ $io =~ ^[0-9]+$ && $q =~ ^[0-9]+$ && $irq =~ ^[0-9]+$ ]] ||
    fail "$c qid 1: io_cpu '$io' rx_queue '$q' rx_irq '$irq'"
  for tx in /sys/class/net/tbh0/queues/tx-*; do
    xps[$tx]=$(<"$tx/xps_cpus")
    if [[ ${tx##*-} == "$q" ]]; then
      printf '%x' $(((1 << ncpu) - 1)) >"$tx/xps_cpus" || fail "XPS of $tx"
    else
      echo 0 >"$tx/xps_cpus" || fail "XPS of $tx"
    fi
  done
  other=$(((io + 1) % ncpu))
  echo "$other" >"/proc/irq/$irq/smp_affinity_list" || fail "moving IRQ $irq"
  irq_snapshot "$b"
  pinned_io "$io" 1
  irq_snapshot "$a"
  read -r bq _ icpu < <(busiest tbh0 input "$b" "$a")
  expect_eq "RX queue of the I/O with XPS on TX queue $q alone (the input IRQ that fired most)" "$bq" "$q"
  expect_eq "IRQ $irq now fires on CPU" "$icpu" "$other"
  j=$(snap irq-moved)
  expect_eq "moved: $c qid 1 rx_irq_cpus" "$(flows_table "$j" | awk -v c="$c" '$1 == c && $2 == 1 { print $6 }')" "$other"
  expect_eq "moved: rx_irq_off_worker" \
    "$(jq -c --arg c "$c" '[.mismatches[] | select(.kind == "rx_irq_off_worker" and .controller == $c) | [.qid, .netdev, .nic_queue, .io_cpu, .irq_cpus]]' "$j")" \
    "[[1,\"tbh0\",$q,$io,[$other]]]"
  "$pw" queues --plan --format json >"$TB_OUT/plan-irq-moved.json" || fail "plan (moved)"
  cmds=$(jq -r '.steps[].command | select(test("^echo [0-9,-]+ > /proc/irq/[0-9]+/smp_affinity_list$"))' \
    "$TB_OUT/plan-irq-moved.json")
  expect_eq "plan: IRQ commands" "$cmds" "echo $io > /proc/irq/$irq/smp_affinity_list"
  while read -r cmd; do sh -c "$cmd" || fail "plan command: $cmd"; done <<<"$cmds"
  irq_snapshot "$b"
  pinned_io "$io" 1
  irq_snapshot "$a"
  read -r _ _ icpu < <(busiest tbh0 input "$b" "$a")
  expect_eq "after the plan: IRQ $irq fires on CPU" "$icpu" "$io"
  j=$(snap irq-fixed)
  expect_eq "after the plan: $c qid 1 rx_irq_cpus" "$(flows_table "$j" | awk -v c="$c" '$1 == c && $2 == 1 { print $6 }')" "$io"
  expect_eq "after the plan: rx_irq_off_worker" "$(off_worker "$j")" ""
  for tx in "${!xps[@]}"; do echo "${xps[$tx]}" >"$tx/xps_cpus" || fail "restoring $tx/xps_cpus"; done
  tb_iopolicy numa || fail "numa"
}

# check_shared json i: path i's I/O queues that share a CPU (sysfs cpu_list
# of their hardware contexts) share the TX queue whose XPS mask holds that
# CPU (sysfs), and pathwise flags exactly those groups as shared_nic_queue.
check_shared() {
  local j=$1 i=$2 c=${TB_CTRLS[$2]} d cpu tx want=() got qs
  declare -A group=()
  for d in "/sys/block/${TB_PATHS[i]}/mq"/*; do
    cpu=$(tr -d ' \n' <"$d/cpu_list")
    [[ $cpu =~ ^[0-9]+$ ]] || fail "hctx ${d##*/} of ${TB_PATHS[i]} serves CPUs $cpu, not one"
    group[$cpu]+=" $c:$((${d##*/} + 1))"
  done
  for cpu in "${!group[@]}"; do
    read -ra qs <<<"${group[$cpu]}"
    ((${#qs[@]} > 1)) || continue
    for tx in "/sys/class/net/tbh$i/queues"/tx-*; do
      [[ ,$(mask_cpus "$(cat "$tx/xps_cpus")"), == *,$cpu,* ]] &&
        want+=("${tx##*-} $(printf '%s\n' "${qs[@]}" | sort | xargs)")
    done
  done
  got=$(jq -r --arg d "tbh$i" '.mismatches[] | select(.kind == "shared_nic_queue" and .netdev == $d and .direction == "tx") | "\(.nic_queue) \(.queues | sort | join(" "))"' "$j" | sort)
  expect_eq "tbh$i: TX queues shared by I/O queues of one CPU" "$got" \
    "$(printf '%s\n' "${want[@]}" | sed '/^$/d' | sort)"
}
